// Command interleave times commands round by round, alternating them, for
// comparisons on a noisy shared machine (docs/BENCHMARKS.md, CLI build).
// hyperfine runs all the runs of one command before the next command, so a
// burst of load from other work lands on one side only; here every round
// runs each command once, in an order that reverses every round, and the
// ratios are taken within a round.
//
//	interleave -r 20 -w 2 'CMD A ...' 'CMD B ...'
//
// Commands are split on spaces (no shell, no quoting). For each command it
// prints the median, minimum and mean wall time and the median user and
// system CPU time; then, for every command after the first, the median over
// rounds of (that command's wall time ÷ the first command's), and the same
// for CPU time (user + system). A command that fails stops the run.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

type sample struct{ wall, user, sys time.Duration }

func main() {
	rounds := flag.Int("r", 20, "measured rounds (each command once per round)")
	warm := flag.Int("w", 2, "warm-up rounds, not measured")
	flag.Parse()
	cmds := flag.Args()
	if len(cmds) == 0 || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "usage: interleave [-r ROUNDS] [-w WARMUP] 'CMD' ['CMD'...]")
		os.Exit(2)
	}
	res := make([][]sample, len(cmds))
	for r := -*warm; r < *rounds; r++ {
		order := make([]int, len(cmds))
		for i := range order {
			order[i] = i
		}
		if r%2 != 0 {
			slices.Reverse(order)
		}
		for _, i := range order {
			s, err := run(cmds[i])
			if err != nil {
				fmt.Fprintf(os.Stderr, "interleave: %s: %v\n", cmds[i], err)
				os.Exit(1)
			}
			if r >= 0 {
				res[i] = append(res[i], s)
			}
		}
	}
	for i, c := range cmds {
		wall := pick(res[i], func(s sample) time.Duration { return s.wall })
		var sum time.Duration
		for _, w := range wall {
			sum += w
		}
		fmt.Printf("%s\n  wall median %.3f s  min %.3f s  mean %.3f s  |  user median %.3f s  sys median %.3f s  (%d rounds)\n",
			c, median(wall).Seconds(), slices.Min(wall).Seconds(), (sum / time.Duration(len(wall))).Seconds(),
			median(pick(res[i], func(s sample) time.Duration { return s.user })).Seconds(),
			median(pick(res[i], func(s sample) time.Duration { return s.sys })).Seconds(), len(wall))
	}
	for i := 1; i < len(cmds); i++ {
		var rw, rc []float64
		for r := range res[0] {
			a, b := res[0][r], res[i][r]
			rw = append(rw, b.wall.Seconds()/a.wall.Seconds())
			rc = append(rc, (b.user+b.sys).Seconds()/(a.user+a.sys).Seconds())
		}
		fmt.Printf("command %d ÷ command 1, per round: wall median %.2f× (range %.2f to %.2f), CPU median %.2f× (range %.2f to %.2f)\n",
			i+1, medianF(rw), slices.Min(rw), slices.Max(rw), medianF(rc), slices.Min(rc), slices.Max(rc))
	}
}

func run(cmdline string) (sample, error) {
	f := strings.Fields(cmdline)
	c := exec.Command(f[0], f[1:]...)
	c.Stdout, c.Stderr = nil, nil // discarded
	t0 := time.Now()
	if err := c.Run(); err != nil {
		return sample{}, err
	}
	return sample{time.Since(t0), c.ProcessState.UserTime(), c.ProcessState.SystemTime()}, nil
}

func pick(s []sample, f func(sample) time.Duration) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, x := range s {
		out[i] = f(x)
	}
	return out
}

// median returns the middle value, or the mean of the two middle values.
func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return (d[(len(d)-1)/2] + d[len(d)/2]) / 2
}

func medianF(x []float64) float64 {
	x = slices.Clone(x)
	slices.Sort(x)
	return (x[(len(x)-1)/2] + x[len(x)/2]) / 2
}
