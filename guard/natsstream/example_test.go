package natsstream_test

import (
	"context"
	"fmt"
	"os"

	"github.com/probly/probly/guard/natsstream"
)

// A Reader delivers every message of the chosen subjects after a
// position, in order, exactly once, whatever happens to its consumer.
func ExampleReader() {
	dir, _ := os.MkdirTemp("", "natsstream-example")
	defer os.RemoveAll(dir)
	e, err := natsstream.StartEmbedded(natsstream.EmbeddedOptions{Dir: dir, Listen: "off"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	nc, js, _ := e.Connect()
	defer nc.Close()
	ctx := context.Background()
	_ = natsstream.EnsureStream(ctx, js, "USERS", []string{"users.created", "users.deleted"})
	for _, u := range []string{"alice", "bob", "carol"} {
		_, _ = js.Publish(ctx, "users.created", []byte(u))
	}

	r := natsstream.NewReader(js, "USERS", []string{"users.created"}, 1, natsstream.ReaderOptions{})
	defer r.Close()
	for range 2 {
		m, err := r.Next(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(m.Seq, m.Subject, string(m.Data))
	}
	// Output:
	// 2 users.created bob
	// 3 users.created carol
}
