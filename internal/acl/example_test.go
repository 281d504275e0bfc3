package acl_test

import (
	"fmt"

	"github.com/probly/probly/internal/acl"
	"github.com/probly/probly/internal/app"
	"github.com/probly/probly/internal/command/commandtest"
)

// A tenant restricted to its key prefix and the Bloom filter commands.
func Example() {
	tab, _ := app.Tables()
	r := acl.New(tab)
	if err := r.SetUser("tenant1", []string{"on", ">s3cret", "~t1:*", "+@bloom"}); err != nil {
		fmt.Println(err)
		return
	}
	u, ok := r.Authenticate("tenant1", "s3cret")
	fmt.Println("authenticated:", ok)
	for _, cmd := range [][]string{{"BF.ADD", "t1:seen", "x"}, {"BF.ADD", "t2:seen", "x"}, {"DEL", "t1:seen"}} {
		args := commandtest.Argv(cmd...)
		spec := tab.Lookup(args[0])
		if d, _ := u.Check(spec, args); d != acl.Allowed {
			fmt.Println(cmd[0], cmd[1], "→", acl.DenialMessage(d, u.Name(), spec))
			continue
		}
		fmt.Println(cmd[0], cmd[1], "→ allowed")
	}
	fmt.Println(r.List()[1][:40])
	fmt.Println(r.SetUser("tenant1", []string{"+nosuch"}))
	// Output:
	// authenticated: true
	// BF.ADD t1:seen → allowed
	// BF.ADD t2:seen → NOPERM No permissions to access a key
	// DEL t1:seen → NOPERM User tenant1 has no permissions to run the 'del' command
	// user tenant1 on #1ec1c26b50d5d3c58d95831
	// Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL
}
