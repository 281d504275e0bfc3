package follow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// SetupOptions are the settings `probly follow init` creates the change
// stream and the snapshot bucket with.
type SetupOptions struct {
	// Stream is the stream's name (no '.', '*', '>' or white space).
	Stream string
	// Subjects the stream captures; at least one.
	Subjects []string
	// Replicas of the stream and of the bucket, 1 … 5 (3 for a cluster
	// that survives the loss of one server).
	Replicas int
	// MaxAge is how long the stream keeps a message; 0 keeps every message.
	// With a limit, a replica that is new or behind by more than MaxAge
	// needs a snapshot (SnapshotConfig) to start.
	MaxAge time.Duration
	// DuplicateWindow is the stream's deduplication window (a publish
	// with the Nats-Msg-Id of one in the window is dropped); > 0 and at
	// most MaxAge when MaxAge is set.
	DuplicateWindow time.Duration
	// Bucket is the object store bucket for follower snapshots.
	Bucket string
}

// ErrSetupDiffers is returned by Setup when the stream or the bucket
// exists with other settings than the recommended ones; Setup changes
// neither.
var ErrSetupDiffers = errors.New("follow: setup: the existing stream or bucket differs from the recommended settings")

// ErrSetupOptions is wrapped by Setup's refusal of invalid options.
var ErrSetupOptions = errors.New("follow: setup: invalid options")

func (o *SetupOptions) check() error {
	switch {
	case o.Stream == "" || strings.ContainsAny(o.Stream, ".*> \t\r\n"):
		return fmt.Errorf("%w: stream name %q (required; no '.', '*', '>' or white space)", ErrSetupOptions, o.Stream)
	case len(o.Subjects) == 0:
		return fmt.Errorf("%w: at least one subject is required", ErrSetupOptions)
	case o.Replicas < 1 || o.Replicas > 5:
		return fmt.Errorf("%w: replicas must be in [1, 5], not %d", ErrSetupOptions, o.Replicas)
	case o.MaxAge < 0:
		return fmt.Errorf("%w: max age %v is negative", ErrSetupOptions, o.MaxAge)
	case o.DuplicateWindow <= 0:
		return fmt.Errorf("%w: the duplicate window must be positive, not %v", ErrSetupOptions, o.DuplicateWindow)
	case o.MaxAge > 0 && o.DuplicateWindow > o.MaxAge:
		return fmt.Errorf("%w: the duplicate window %v is longer than the max age %v", ErrSetupOptions, o.DuplicateWindow, o.MaxAge)
	}
	for _, s := range o.Subjects {
		if s == "" || strings.ContainsAny(s, " \t\r\n") {
			return fmt.Errorf("%w: subject %q", ErrSetupOptions, s)
		}
	}
	if err := checkBucketName(o.Bucket); err != nil {
		return fmt.Errorf("%w: %v", ErrSetupOptions, err)
	}
	return nil
}

func ageString(d time.Duration) string {
	if d == 0 {
		return "unlimited"
	}
	return d.String()
}

// Setup creates the change stream (file storage, limits retention,
// o.Replicas, o.MaxAge, o.DuplicateWindow, o.Subjects) and the snapshot
// bucket (file storage, o.Replicas) if they are missing, and checks the
// ones that exist. It returns one line per resource saying what it did or
// found; if an existing one differs (a missing subject, another storage,
// retention, replica count, max age or duplicate window) the lines list
// each difference and the error wraps ErrSetupDiffers: nothing existing is
// changed (edit it with the nats CLI, or delete it). Invalid options wrap
// ErrSetupOptions. Cost: a few JetStream API requests.
func Setup(ctx context.Context, js jetstream.JetStream, o SetupOptions) (report []string, err error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	differs := false
	want := jetstream.StreamConfig{
		Name:        o.Stream,
		Description: "probly serve --follow change stream",
		Subjects:    slices.Clone(o.Subjects),
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Replicas:    o.Replicas,
		MaxAge:      o.MaxAge,
		Duplicates:  o.DuplicateWindow,
	}
	settings := fmt.Sprintf("file storage, limits retention, replicas %d, max age %s, duplicate window %v, subjects %s",
		o.Replicas, ageString(o.MaxAge), o.DuplicateWindow, strings.Join(o.Subjects, " "))
	st, err := js.Stream(ctx, o.Stream)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		if _, err := js.CreateStream(ctx, want); err != nil {
			return report, fmt.Errorf("follow: setup: creating stream %s: %w", o.Stream, err)
		}
		report = append(report, fmt.Sprintf("stream %s: created (%s)", o.Stream, settings))
	case err != nil:
		return report, fmt.Errorf("follow: setup: stream %s: %w", o.Stream, err)
	default:
		have := st.CachedInfo().Config
		var diff []string
		if have.Storage != want.Storage {
			diff = append(diff, fmt.Sprintf("storage %s, want %s", have.Storage, want.Storage))
		}
		if have.Retention != want.Retention {
			diff = append(diff, fmt.Sprintf("retention %s, want %s", have.Retention, want.Retention))
		}
		if have.Replicas != want.Replicas && !(have.Replicas == 0 && want.Replicas == 1) {
			diff = append(diff, fmt.Sprintf("replicas %d, want %d", have.Replicas, want.Replicas))
		}
		if have.MaxAge != want.MaxAge {
			diff = append(diff, fmt.Sprintf("max age %s, want %s", ageString(have.MaxAge), ageString(want.MaxAge)))
		}
		if have.Duplicates != want.Duplicates {
			diff = append(diff, fmt.Sprintf("duplicate window %v, want %v", have.Duplicates, want.Duplicates))
		}
		for _, s := range o.Subjects {
			if !slices.Contains(have.Subjects, s) {
				diff = append(diff, fmt.Sprintf("subject %s missing", s))
			}
		}
		if len(diff) == 0 {
			report = append(report, fmt.Sprintf("stream %s: exists with the recommended settings", o.Stream))
		} else {
			differs = true
			report = append(report, fmt.Sprintf("stream %s: exists and differs: %s", o.Stream, strings.Join(diff, "; ")))
		}
	}

	obs, err := js.ObjectStore(ctx, o.Bucket)
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound):
		if _, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket: o.Bucket, Description: "probly follower snapshots", Storage: jetstream.FileStorage, Replicas: o.Replicas,
		}); err != nil {
			return report, fmt.Errorf("follow: setup: creating bucket %s: %w", o.Bucket, err)
		}
		report = append(report, fmt.Sprintf("bucket %s: created (file storage, replicas %d)", o.Bucket, o.Replicas))
	case err != nil:
		return report, fmt.Errorf("follow: setup: bucket %s: %w", o.Bucket, err)
	default:
		status, err := obs.Status(ctx)
		if err != nil {
			return report, fmt.Errorf("follow: setup: bucket %s: %w", o.Bucket, err)
		}
		var diff []string
		if status.Storage() != jetstream.FileStorage {
			diff = append(diff, fmt.Sprintf("storage %s, want %s", status.Storage(), jetstream.FileStorage))
		}
		if r := max(status.Replicas(), 1); r != o.Replicas {
			diff = append(diff, fmt.Sprintf("replicas %d, want %d", r, o.Replicas))
		}
		if len(diff) == 0 {
			report = append(report, fmt.Sprintf("bucket %s: exists with the recommended settings", o.Bucket))
		} else {
			differs = true
			report = append(report, fmt.Sprintf("bucket %s: exists and differs: %s", o.Bucket, strings.Join(diff, "; ")))
		}
	}
	if differs {
		return report, ErrSetupDiffers
	}
	return report, nil
}
