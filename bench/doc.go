// Package bench compares probly against other libraries and servers. It is
// a separate module so that the comparison libraries never become
// dependencies of probly itself. See docs/BENCHMARKS.md for how to run it.
package bench
