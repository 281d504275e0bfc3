package app

import "github.com/probly/probly/internal/server"

// The app's tests run every command family through the server with
// scrubbed input buffers: a handler, queue or log that kept a request's
// arguments past its command would read overwritten bytes and fail.
func init() { server.ScrubInput = true }
