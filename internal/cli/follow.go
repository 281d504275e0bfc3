package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/probly/probly/guard/natsstream"
	"github.com/probly/probly/internal/follow"
)

func newFollowCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "follow",
		Short: "Set up the NATS JetStream side of serve --follow",
	}
	c.AddCommand(newFollowInitCmd())
	requireSubcommand(c, false)
	return c
}

func newFollowInitCmd() *cobra.Command {
	var url, creds string
	var o follow.SetupOptions
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "init --url URL --stream NAME --subjects S1,S2 [flags]",
		Short: "Create (or check) the change stream and the snapshot bucket with the recommended settings",
		Long: `init creates the JetStream stream that serve --follow reads (file storage,
limits retention, --replicas, --max-age, --duplicate-window, --subjects) and
the object store bucket its replicas publish snapshots to and bootstrap from
(file storage, the same replicas), when they are missing. For a stream or a
bucket that exists it checks those settings and reports every difference
(exit code 3) without changing anything: edit them with the nats CLI.

With --max-age (retention), a replica that is new, wiped or behind by more
than the max age can start only from a snapshot: set "snapshot": {"publish":
true} for at least one replica (docs/OPERATIONS.md).`,
		Args: cobra.NoArgs,
		RunE: run(func(cmd *cobra.Command, args []string) error {
			if url == "" {
				return usagef("follow init: --url is required")
			}
			if o.Stream == "" || len(o.Subjects) == 0 {
				return usagef("follow init: --stream and --subjects are required")
			}
			if o.Replicas < 1 || o.Replicas > 5 {
				return usagef("follow init: --replicas must be in [1, 5], not %d", o.Replicas)
			}
			if o.MaxAge < 0 || o.DuplicateWindow <= 0 || (o.MaxAge > 0 && o.DuplicateWindow > o.MaxAge) {
				return usagef("follow init: --max-age must be ≥ 0 and --duplicate-window in (0, max age]")
			}
			var opts []nats.Option
			if creds != "" {
				opts = append(opts, nats.UserCredentials(creds))
			}
			nc, js, err := natsstream.Connect(url, opts...)
			if err != nil {
				return fmt.Errorf("follow init: %w", err)
			}
			defer nc.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			report, err := follow.Setup(ctx, js, o)
			for _, line := range report {
				fmt.Fprintln(cmd.OutOrStdout(), line)
			}
			if errors.Is(err, follow.ErrSetupOptions) {
				return usagef("follow init: %v", err)
			}
			if err != nil {
				return fmt.Errorf("follow init: %w", err)
			}
			return nil
		}),
	}
	f := c.Flags()
	f.StringVar(&url, "url", "", "NATS server URL, or a comma-separated list for a cluster (required)")
	f.StringVar(&creds, "creds", "", "NATS credentials file (JWT and NKey)")
	f.StringVar(&o.Stream, "stream", "", "stream name, as in the --follow file's \"stream\" (required)")
	f.StringSliceVar(&o.Subjects, "subjects", nil, "subjects the stream captures: comma-separated or repeated (required)")
	f.IntVar(&o.Replicas, "replicas", 3, "replicas of the stream and of the bucket, 1 … 5")
	f.DurationVar(&o.MaxAge, "max-age", 0, "how long the stream keeps messages (e.g. 168h); 0 keeps every message")
	f.DurationVar(&o.DuplicateWindow, "duplicate-window", 2*time.Minute, "deduplication window for the Nats-Msg-Id header")
	f.StringVar(&o.Bucket, "bucket", follow.DefaultSnapshotBucket, "object store bucket for follower snapshots")
	f.DurationVar(&timeout, "timeout", 30*time.Second, "give up after this long")
	return c
}
