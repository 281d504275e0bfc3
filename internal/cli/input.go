package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// maxLine is the longest accepted input line (key) in bytes.
const maxLine = 1 << 20

// forEachLine calls fn with every line of the named files ("-" or no names
// means stdin). Lines are split on '\n'; a trailing '\r' is removed. The
// slice passed to fn is only valid during the call. skipFirst skips the
// first line of each file (a header row). A progress bar is drawn on
// stderr when it is a terminal and the input sizes are known.
func forEachLine(names []string, stdin io.Reader, stderr io.Writer, desc string, skipFirst bool, fn func(line []byte) error) error {
	return forEachLineAt(names, stdin, stderr, desc, skipFirst, func(_ inputPos, line []byte) error { return fn(line) })
}

// inputPos is where a line or record starts: the input's name ("-" for
// stdin) and its 1-based line number in that input.
type inputPos struct {
	name string
	line int
}

func (p inputPos) String() string {
	name := p.name
	if name == "-" {
		name = "stdin"
	}
	return fmt.Sprintf("%s:%d", name, p.line)
}

// forEachLineAt is forEachLine that also passes each line's position.
func forEachLineAt(names []string, stdin io.Reader, stderr io.Writer, desc string, skipFirst bool, fn func(at inputPos, line []byte) error) error {
	return forEachInput(names, stdin, stderr, desc, func(name string, r io.Reader) error {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), maxLine)
		skip := skipFirst
		for n := 1; sc.Scan(); n++ {
			if skip {
				skip = false
				continue
			}
			line := sc.Bytes()
			if len(line) > 0 && line[len(line)-1] == '\r' {
				line = line[:len(line)-1]
			}
			if err := fn(inputPos{name, n}, line); err != nil {
				return err
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
}

// forEachInput calls fn with a reader of each named file in turn ("-", or
// no names, means stdin), opened just before and closed just after its
// call, behind one progress bar over all of them (progressFor). A missing
// file is an error before any input is read.
func forEachInput(names []string, stdin io.Reader, stderr io.Writer, desc string, fn func(name string, r io.Reader) error) error {
	if len(names) == 0 {
		names = []string{"-"}
	}
	bar, err := progressFor(names, stderr, desc)
	if err != nil {
		return err
	}
	if bar != nil {
		defer bar.Finish()
	}
	for _, n := range names {
		if err := readInput(n, stdin, bar, fn); err != nil {
			return err
		}
	}
	return nil
}

func readInput(name string, stdin io.Reader, bar *progressbar.ProgressBar, fn func(name string, r io.Reader) error) error {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	if bar != nil {
		pr := progressbar.NewReader(r, bar)
		r = &pr
	}
	return fn(name, r)
}

// progressFor returns a progress bar over the total size of the named
// files when stderr is a terminal and the total is known and above 1 MiB,
// else nil. A missing file is an error.
func progressFor(names []string, stderr io.Writer, desc string) (*progressbar.ProgressBar, error) {
	var total int64
	for _, n := range names {
		if n == "-" {
			total = -1
			break
		}
		st, err := os.Stat(n)
		if err != nil {
			return nil, err
		}
		total += st.Size()
	}
	f, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || total <= 1<<20 {
		return nil, nil
	}
	return newProgressBar(total, stderr, desc), nil
}

// newProgressBar is the bar progressFor shows. It renders an empty frame
// at once, which starts its clock: the library otherwise starts the clock
// at the first Add and renders that frame at once, showing the first
// read's bytes over a few microseconds ("130 GB/s"); from the blank frame
// on, frames are at least the throttle (100 ms) apart, so every rate is
// bytes over at least 100 ms.
func newProgressBar(total int64, w io.Writer, desc string) *progressbar.ProgressBar {
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowBytes(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
	)
}
