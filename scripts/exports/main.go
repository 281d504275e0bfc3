// Command exports counts the exported functions and methods of the public
// library packages (bloom, cuckoo, hll), from the AST of their non-test
// files: package-level functions with an exported name, and methods with an
// exported name on an exported receiver type (methods of unexported types
// are not part of the API). Issue 14 sets the targets: bloom ≤ 100,
// cuckoo ≤ 35, hll ≤ 25; exports_test.go checks the packages whose target
// is met.
//
// Usage, from the repository root:
//
//	go run ./scripts/exports [-v] [dir ...]
//
// It prints one line per package: "<dir> <count> (target <t>)"; -v also
// lists the names. The default directories are bloom, cuckoo and hll.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// targets are issue 14's limits per package directory.
var targets = map[string]int{"bloom": 100, "cuckoo": 35, "hll": 25, "topk": 20, "cms": 25, "tdigest": 30}

func main() {
	verbose := flag.Bool("v", false, "list the exported names")
	flag.Parse()
	dirs := flag.Args()
	if len(dirs) == 0 {
		dirs = []string{"bloom", "cuckoo", "hll", "topk", "cms", "tdigest"}
	}
	status := 0
	for _, d := range dirs {
		names, err := Exports(d)
		if err != nil {
			fmt.Fprintln(os.Stderr, "exports:", err)
			status = 1
			continue
		}
		t, ok := targets[filepath.Base(d)]
		line := fmt.Sprintf("%s %d", d, len(names))
		if ok {
			line += fmt.Sprintf(" (target %d)", t)
			if len(names) > t {
				line += " OVER"
			}
		}
		fmt.Println(line)
		if *verbose {
			for _, n := range names {
				fmt.Println("\t" + n)
			}
		}
	}
	os.Exit(status)
}

// Exports returns the sorted exported functions ("Name") and methods
// ("Type.Name") declared in the non-test Go files of dir.
func Exports(dir string) ([]string, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var names []string
	parsed := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		parsed++
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() {
				continue
			}
			if fn.Recv == nil {
				names = append(names, fn.Name.Name)
				continue
			}
			if recv := recvName(fn.Recv.List[0].Type); ast.IsExported(recv) {
				names = append(names, recv+"."+fn.Name.Name)
			}
		}
	}
	if parsed == 0 {
		return nil, fmt.Errorf("%s: no non-test Go files", dir)
	}
	sort.Strings(names)
	return names, nil
}

// recvName is the type name of a receiver expression (T, *T, T[P], *T[P]).
func recvName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}
