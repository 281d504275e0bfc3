package cli

import (
	"context"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/probly/probly/internal/app"
)

func newServeCmd() *cobra.Command {
	var o app.Options
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run the Redis-protocol server (RedisBloom-compatible BF.*)",
		Long: `serve listens for RESP2/RESP3 clients (redis-cli, go-redis, …) and keeps its
data in --dir: an append-only file replayed at start, plus snapshots written
by SAVE/BGSAVE. SIGINT/SIGTERM shut down gracefully.`,
		Args: cobra.NoArgs,
		RunE: run(func(cmd *cobra.Command, args []string) error {
			switch o.AppendFsync {
			case "always", "everysec", "no":
			default:
				return usagef("serve: --appendfsync must be always, everysec or no, not %q", o.AppendFsync)
			}
			o.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			if o.RequirePass == "" {
				o.RequirePass = os.Getenv("PROBLY_REQUIREPASS")
			}
			return app.Run(context.Background(), o)
		}),
	}
	c.Flags().StringVar(&o.Addr, "addr", app.DefaultAddr, "listen address host:port")
	c.Flags().StringVar(&o.Dir, "dir", app.DefaultDir, "data directory (AOF and snapshots)")
	c.Flags().StringVar(&o.AppendFsync, "appendfsync", app.DefaultAppendFsync, "fsync policy: always | everysec | no")
	c.Flags().StringVar(&o.RequirePass, "requirepass", "", "password clients must AUTH with (or env PROBLY_REQUIREPASS)")
	return c
}
