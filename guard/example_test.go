package guard_test

import (
	"context"
	"fmt"

	"github.com/probly/probly/guard"
)

// A Guard answers "definitely absent" from a Bloom filter built from a
// snapshot of the keys, and calls the loader only for keys that may exist.
func Example() {
	db := map[string]string{"alice": "admin", "bob": "user"}
	loads := 0
	g, err := guard.New(guard.Options[string]{
		Name: "users",
		Loader: func(_ context.Context, key []byte) (string, bool, error) {
			loads++
			v, ok := db[string(key)]
			return v, ok, nil
		},
		Snapshot: guard.SnapshotFunc(func(_ context.Context, fn func(key []byte) error) (uint64, error) {
			for k := range db {
				if err := fn([]byte(k)); err != nil {
					return 0, err
				}
			}
			return 0, nil
		}),
		NewFilter:         guard.NewBloom,
		Capacity:          1000,
		FalsePositiveRate: 0.001,
	})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	ctx := context.Background()
	if err := g.WaitReady(ctx); err != nil {
		panic(err)
	}
	v, found, _ := g.Get(ctx, []byte("alice"))
	fmt.Println(v, found)
	fmt.Println(g.Test([]byte("alice")))
	// Output:
	// admin true
	// true
}
