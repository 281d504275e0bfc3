package persist

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/probly/probly/internal/keyspace"
)

const (
	crashDirEnv   = "PROBLY_PERSIST_CRASH_DIR"
	crashRoundEnv = "PROBLY_PERSIST_CRASH_ROUND"
	fsizeDirEnv   = "PROBLY_PERSIST_FSIZE_DIR"
	fsizeBufEnv   = "PROBLY_PERSIST_FSIZE_BUFFERED"
)

// TestCrashChild is the child side of TestKill9: it writes with "always"
// (with BufferAppends, as the server, except in round 1) from several
// goroutines, snapshots in the background, and prints every
// key whose Wait returned. The parent kills it with SIGKILL.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("child process of TestKill9")
	}
	round := os.Getenv(crashRoundEnv)
	s := keyspace.New(nil)
	sm := storeModel{s}
	db, err := Open(Options{Dir: dir, Fsync: FsyncAlways, BufferAppends: os.Getenv(crashRoundEnv) != "1"}, decodeTest, sm.load, sm.replay)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(3)
	}
	s.SetLogger(db)
	var out sync.Mutex
	fmt.Println("READY")
	go func() { // snapshots, so that kills also land during rotation and snapshot writing
		for {
			time.Sleep(time.Duration(20+rand.IntN(40)) * time.Millisecond)
			if err := db.BGSnapshot(s); err != nil && !errors.Is(err, ErrSnapshotInProgress) {
				fmt.Fprintln(os.Stderr, "child bgsave:", err)
				os.Exit(4)
			}
		}
	}()
	for g := range 8 {
		go func() {
			for i := 0; ; i++ {
				k := fmt.Sprintf("r%s-g%d-%d", round, g, i)
				seq, err := s.Update([]byte(k), func(tx *keyspace.Txn) {
					tx.Set(strVal("v"))
					tx.Log([]byte("SET"), []byte(k), []byte("v"))
				})
				if err == nil {
					err = db.Wait(seq)
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, "child write:", err)
					os.Exit(5)
				}
				out.Lock()
				os.Stdout.WriteString("ACK " + k + ";\n") // one write(2): atomic on a pipe
				out.Unlock()
			}
		}()
	}
	time.Sleep(30 * time.Second) // the parent kills long before
	os.Exit(6)
}

// TestKill9 runs the child, kills it with SIGKILL at a random moment, and
// checks that every acknowledged write is recovered. Each round continues
// on the same directory, so recovery after a kill is itself tested again.
func TestKill9(t *testing.T) {
	if os.Getenv(crashDirEnv) != "" || runtime.GOOS == "windows" {
		t.Skip()
	}
	dir := t.TempDir()
	var acked []string
	for round := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, fmt.Sprintf("%s=%d", crashRoundEnv, round))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		var got []string
		ready := false
		kill := time.After(time.Duration(150+rand.IntN(350)) * time.Millisecond)
		timeout := time.After(20 * time.Second)
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					cmd.Wait()
					t.Fatalf("round %d: child exited early: %s", round, stderr.String())
				}
				if l == "READY" {
					ready = true
				} else if k, ok := strings.CutPrefix(l, "ACK "); ok && strings.HasSuffix(k, ";") {
					got = append(got, strings.TrimSuffix(k, ";"))
				}
			case <-kill:
				if ready && len(got) > 0 {
					break read
				}
				kill = time.After(20 * time.Millisecond)
			case <-timeout:
				cmd.Process.Kill()
				t.Fatalf("round %d: child made no progress: %s", round, stderr.String())
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for l := range lines { // whatever was acknowledged before the kill
			if k, ok := strings.CutPrefix(l, "ACK "); ok && strings.HasSuffix(k, ";") {
				got = append(got, strings.TrimSuffix(k, ";"))
			}
		}
		cmd.Wait()
		if strings.TrimSpace(stderr.String()) != "" {
			t.Logf("round %d child stderr: %s", round, stderr.String())
		}
		acked = append(acked, got...)

		md := newModel()
		db, err := Open(Options{Dir: dir, Fsync: FsyncAlways}, decodeTest, md.load, md.replay)
		if err != nil {
			t.Fatalf("round %d: recovery after kill -9: %v", round, err)
		}
		missing := 0
		for _, k := range acked {
			if _, ok := md.m[k]; !ok {
				missing++
				if missing < 5 {
					t.Errorf("round %d: acknowledged key %s lost", round, k)
				}
			}
		}
		t.Logf("round %d: %d acknowledged this round, %d in total, %d keys recovered (%d from snapshot), files %v",
			round, len(got), len(acked), len(md.m), md.loaded, files(t, dir))
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if missing > 0 {
			t.Fatalf("round %d: %d acknowledged keys lost", round, missing)
		}
	}
}

// TestFsizeChild is the child side of TestPartialWriteCutOff: with
// RLIMIT_FSIZE the kernel makes a write stop part-way, as a full disk does.
func TestFsizeChild(t *testing.T) {
	dir := os.Getenv(fsizeDirEnv)
	if dir == "" {
		t.Skip("child process of TestPartialWriteCutOff")
	}
	md := newModel()
	db, err := Open(Options{Dir: dir, Fsync: FsyncNo, BufferAppends: os.Getenv(fsizeBufEnv) == "1"}, decodeTest, md.load, md.replay)
	if err != nil {
		fmt.Println("ERR open", err)
		os.Exit(3)
	}
	// Go ignores SIGXFSZ, so an oversized write returns EFBIG.
	lim := syscall.Rlimit{Cur: 4000, Max: 4000}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Println("SKIP", err)
		os.Exit(0)
	}
	val := strings.Repeat("x", 100)
	failed := 0
	for i := 0; i < 100; i++ {
		k := fmt.Sprintf("k%d", i)
		// The write error shows at Wait (Append only buffers the record).
		seq, err := db.Append([][]byte{[]byte("SET"), []byte(k), []byte(val)})
		if err == nil {
			err = db.Wait(seq)
		}
		if err != nil {
			if !errors.Is(err, syscall.EFBIG) && !errors.Is(err, ErrOutOfSync) {
				fmt.Println("ERR unexpected", err)
				os.Exit(4)
			}
			failed++
			continue
		}
		fmt.Println("OK", k)
	}
	// After a failed append every write is refused until a snapshot,
	// even a small one that would fit.
	if seq, err := db.Append([][]byte{[]byte("DEL"), []byte("k0")}); err == nil && db.Wait(seq) == nil {
		fmt.Println("OK del")
	} else if !errors.Is(err, ErrOutOfSync) || !errors.Is(db.WriteGate(), ErrOutOfSync) {
		fmt.Println("ERR after a failed append:", err)
		os.Exit(4)
	}
	fmt.Println("FAILED", failed)
	db.Close()
	os.Exit(0)
}

// TestPartialWriteCutOff: with and without BufferAppends.
func TestPartialWriteCutOff(t *testing.T) {
	if os.Getenv(fsizeDirEnv) != "" || runtime.GOOS != "linux" {
		t.Skip()
	}
	t.Run("unbuffered", func(t *testing.T) { partialWriteCutOff(t, "0") })
	t.Run("buffered", func(t *testing.T) { partialWriteCutOff(t, "1") })
}

func partialWriteCutOff(t *testing.T, buffered string) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFsizeChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), fsizeDirEnv+"="+dir, fsizeBufEnv+"="+buffered)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var oks []string
	delOK, failedLine := false, ""
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		switch {
		case strings.HasPrefix(l, "SKIP"):
			t.Skip(l)
		case strings.HasPrefix(l, "ERR"):
			t.Fatal(l)
		case l == "OK del":
			delOK = true
		case strings.HasPrefix(l, "OK "):
			oks = append(oks, strings.TrimPrefix(l, "OK "))
		case strings.HasPrefix(l, "FAILED"):
			failedLine = l
		}
	}
	if delOK {
		t.Fatal("an append after a failed one was accepted before any snapshot")
	}
	if failedLine == "FAILED 0" || len(oks) == 0 {
		t.Fatalf("expected some appends to fail and some to succeed: %d ok, %s", len(oks), failedLine)
	}
	md := newModel()
	db, err := Open(Options{Dir: dir}, decodeTest, md.load, md.replay)
	if err != nil {
		t.Fatalf("reopen after partial writes: %v", err)
	}
	defer db.Close()
	want := len(oks)
	if delOK {
		want++
	}
	if len(md.records) != want {
		t.Fatalf("replayed %d records, want exactly the %d acknowledged ones", len(md.records), want)
	}
	for i, k := range oks {
		if md.records[i][1] != k {
			t.Fatalf("record %d is %q, want %s", i, md.records[i], k)
		}
	}
	t.Logf("%d appends succeeded, %s, trailing DEL ok=%v", len(oks), failedLine, delOK)
}
