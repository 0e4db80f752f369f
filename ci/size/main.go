// Command size checks the limits docs/development.md states: no function
// over 80 lines, none in cmd/tunnelprobe over 60, and cmd/tunnelprobe at
// most 1,500 lines outside tests (flags, wiring and printing; the work is in
// the packages). It prints the longest functions, those lines and the
// exported identifiers of package middleware, and exits 1 when a limit is
// passed. Run it from the repository's root: go run ./ci/size
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

const (
	maxLines    = 80
	maxCmdLines = 60
	maxCmdSize  = 1500
	cmdDir      = "cmd/tunnelprobe"
)

type function struct {
	name  string
	lines int
	limit int
}

func main() {
	var funcs []function
	cmdLines := 0
	exported := map[string]int{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		inCmd := filepath.Dir(path) == cmdDir
		if inCmd {
			cmdLines += fset.File(f.Pos()).LineCount()
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Body != nil {
				limit := maxLines
				if inCmd {
					limit = maxCmdLines
				}
				lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
				funcs = append(funcs, function{path + " " + fn.Name.Name, lines, limit})
			}
			if filepath.Dir(path) == "middleware" {
				countExported(decl, exported)
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "size:", err)
		os.Exit(2)
	}
	sort.Slice(funcs, func(i, j int) bool { return funcs[i].lines > funcs[j].lines })
	over := 0
	for i, fn := range funcs {
		if fn.lines > fn.limit {
			over++
			fmt.Printf("%4d lines (limit %d): %s\n", fn.lines, fn.limit, fn.name)
		} else if i < 3 {
			fmt.Printf("%4d lines: %s\n", fn.lines, fn.name)
		}
	}
	fmt.Printf("%s: %d lines outside tests (limit %d)\n", cmdDir, cmdLines, maxCmdSize)
	if cmdLines > maxCmdSize {
		over++
	}
	fmt.Printf("middleware: %d exported functions, %d types, %d vars, %d consts\n",
		exported["func"], exported["type"], exported["var"], exported["const"])
	if over > 0 {
		fmt.Printf("%d limits passed\n", over)
		os.Exit(1)
	}
}

// countExported adds decl's exported package-level names to n, by kind;
// methods are not counted.
func countExported(decl ast.Decl, n map[string]int) {
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil && d.Name.IsExported() {
			n["func"]++
		}
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					n["type"]++
				}
			case *ast.ValueSpec:
				for _, name := range s.Names {
					if name.IsExported() {
						n[d.Tok.String()]++
					}
				}
			}
		}
	}
}
