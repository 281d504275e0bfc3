package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// maxLine is the longest accepted input line (key) in bytes.
const maxLine = 1 << 20

// forEachLine calls fn with every line of the named files ("-" or no names
// means stdin). Lines are split on '\n'; a trailing '\r' is removed. The
// slice passed to fn is only valid during the call. A progress bar is drawn
// on stderr when it is a terminal and the input sizes are known.
func forEachLine(names []string, stdin io.Reader, stderr io.Writer, desc string, skipFirst bool, fn func(line []byte) error) error {
	if len(names) == 0 {
		names = []string{"-"}
	}
	var total int64
	for _, n := range names {
		if n == "-" {
			total = -1
			break
		}
		st, err := os.Stat(n)
		if err != nil {
			return err
		}
		total += st.Size()
	}
	var bar *progressbar.ProgressBar
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) && total > 1<<20 {
		bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription(desc),
			progressbar.OptionShowBytes(true),
			progressbar.OptionThrottle(100_000_000),
			progressbar.OptionClearOnFinish(),
		)
		defer bar.Finish()
	}
	for _, n := range names {
		var r io.Reader = stdin
		if n != "-" {
			f, err := os.Open(n)
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
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), maxLine)
		skip := skipFirst
		for sc.Scan() {
			if skip {
				skip = false
				continue
			}
			line := sc.Bytes()
			if len(line) > 0 && line[len(line)-1] == '\r' {
				line = line[:len(line)-1]
			}
			if err := fn(line); err != nil {
				return err
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
	}
	return nil
}
