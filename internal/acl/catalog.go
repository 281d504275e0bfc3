package acl

import (
	"sort"
	"strings"

	"github.com/probly/probly/internal/command"
)

// catalog numbers every public command and subcommand (the bit of a
// user's command bitmap), containers followed by their subcommands, in
// name order.
type catalog struct {
	cmds   []*command.Spec
	cats   []command.ACLCat
	byName map[string]int // "get", "client", "client|id"
	ids    map[*command.Spec]int
	top    []int         // top-level commands
	subs   map[int][]int // a container's subcommands
}

func newCatalog(t *command.Table) *catalog {
	c := &catalog{byName: map[string]int{}, ids: map[*command.Spec]int{}, subs: map[int][]int{}}
	specs := t.Public()
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	add := func(s *command.Spec) int {
		id := len(c.cmds)
		c.cmds = append(c.cmds, s)
		c.cats = append(c.cats, s.ACLCategories())
		c.byName[s.Name] = id
		c.ids[s] = id
		return id
	}
	for _, s := range specs {
		id := add(s)
		c.top = append(c.top, id)
		subs := append([]*command.Spec(nil), s.Subcommands...)
		sort.Slice(subs, func(i, j int) bool { return subs[i].Name < subs[j].Name })
		for _, sub := range subs {
			c.subs[id] = append(c.subs[id], add(sub))
		}
	}
	return c
}

// changePerm is Redis's ACLChangeSelectorPerm: the command's bit and
// those of all its subcommands; its first-arg rules go.
func (c *catalog) changePerm(st *state, id int, allow bool) {
	st.setBit(id, allow)
	delete(st.firstArgs, id)
	for _, sub := range c.subs[id] {
		st.setBit(sub, allow)
	}
}

// setCategory is Redis's ACLSetSelectorCommandBitsForCategory: every
// command of the category, then every subcommand of it.
func (c *catalog) setCategory(st *state, cat command.ACLCat, allow bool) {
	for _, id := range c.top {
		if c.cats[id]&cat != 0 {
			c.changePerm(st, id, allow)
		}
		for _, sub := range c.subs[id] {
			if c.cats[sub]&cat != 0 {
				c.changePerm(st, sub, allow)
			}
		}
	}
}

// Categories returns every category name (without "@"), in Redis's
// order (ACL CAT).
func Categories() []string {
	var out []string
	for i := 0; i < 64; i++ {
		n := command.ACLCat(1 << i).Names()
		if len(n) == 0 {
			break
		}
		out = append(out, n[0][1:])
	}
	return out
}

// InCategory returns the commands and subcommands ("client|id") in the
// category called name, in catalog order, and false if there is no such
// category (ACL CAT <category>).
func (r *Registry) InCategory(name string) ([]string, bool) {
	cat := command.ACLCategory(name)
	if cat == 0 {
		return nil, false
	}
	var out []string
	for id, s := range r.cat.cmds {
		if r.cat.cats[id]&cat != 0 {
			out = append(out, s.Name)
		}
	}
	return out, true
}

// describe is the user's rules as ACL LIST writes them after the name.
func (r *Registry) describe(st *state) string {
	b := flags(st)
	for _, p := range st.passwords {
		b = append(b, "#"+p)
	}
	if k := keysText(st); k != "" {
		b = append(b, k)
	}
	if st.allChannels {
		b = append(b, "&*")
	} else {
		b = append(b, "resetchannels")
		if ch := channelsText(st); ch != "" {
			b = append(b, ch)
		}
	}
	b = append(b, r.commandRules(st))
	return strings.Join(b, " ")
}

// flags are GETUSER's flags.
func flags(st *state) []string {
	var out []string
	if st.enabled {
		out = append(out, "on")
	} else {
		out = append(out, "off")
	}
	if st.nopass {
		out = append(out, "nopass")
	}
	if st.sanitize != "" {
		out = append(out, st.sanitize)
	}
	return out
}

func keysText(st *state) string {
	if st.allKeys {
		return "~*"
	}
	parts := make([]string, len(st.keys))
	for i, p := range st.keys {
		parts[i] = p.String()
	}
	return strings.Join(parts, " ")
}

func channelsText(st *state) string {
	if st.allChannels {
		return "&*"
	}
	parts := make([]string, len(st.channels))
	for i, c := range st.channels {
		parts[i] = "&" + c
	}
	return strings.Join(parts, " ")
}

// commandRules is Redis 7.0's ACLDescribeSelectorCommandRules: start from
// +@all (the user has allcommands) or -@all, then repeatedly apply the
// category that fits the bitmap best (more commands in common than
// different, fewest differences), then single commands for what differs.
// Single commands are written in name order (Redis's order is its hash
// table's).
func (r *Registry) commandRules(st *state) string {
	c := r.cat
	additive := !st.allCommands
	rules := []string{"+@all"}
	fake := r.emptyState()
	if additive {
		rules[0] = "-@all"
	} else {
		r.apply(fake, "+@all") //nolint:errcheck // cannot fail
	}
	temp := st.clone()
	ncat := len(Categories())
	applied := make([]bool, ncat)
	for {
		best, minDiff, maxSame := -1, int(^uint(0)>>1), 0
		for j := 0; j < ncat; j++ {
			if applied[j] {
				continue
			}
			on, off := 0, 0
			for _, id := range c.top {
				if c.cats[id]&(1<<j) != 0 {
					if temp.bit(id) {
						on++
					} else {
						off++
					}
				}
			}
			diff, same := off, on
			if !additive {
				diff, same = on, off
			}
			if same > diff && (diff < minDiff || diff == minDiff && same > maxSame) {
				best, minDiff, maxSame = j, diff, same
			}
		}
		if best < 0 {
			break
		}
		c.setCategory(fake, 1<<best, additive)
		c.setCategory(temp, 1<<best, !additive)
		sign := "+@"
		if !additive {
			sign = "-@"
		}
		rules = append(rules, sign+Categories()[best])
		applied[best] = true
	}
	var single func(ids []int)
	single = func(ids []int) {
		for _, id := range ids {
			user, f := st.bit(id), fake.bit(id)
			if user != f {
				if user {
					rules = append(rules, "+"+c.cmds[id].Name)
				} else {
					rules = append(rules, "-"+c.cmds[id].Name)
				}
				c.changePerm(fake, id, user)
			}
			single(c.subs[id])
			if !user {
				for _, a := range st.firstArgs[id] {
					rules = append(rules, "+"+c.cmds[id].Name+"|"+a)
				}
			}
		}
	}
	single(c.top)
	return strings.Join(rules, " ")
}
