// Command size checks the limits docs/development.md states: no function
// over 80 lines, none in cmd/tunnelprobe's own files over 60 (flags, wiring
// and printing: the binary's wiring of its own lives in its internal
// packages, the work in the project's), and package middleware at most 75
// exported functions, types and methods (what go doc lists for a router
// user to read). It prints the longest functions and that count, and exits
// 1 when a limit is passed. Run it from the repository's root:
// go run ./ci/size
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
	maxAPI      = 75
	cmdDir      = "cmd/tunnelprobe"
)

type function struct {
	name  string
	lines int
	limit int
}

func main() {
	var funcs []function
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
	api := exported["func"] + exported["type"] + exported["method"]
	fmt.Printf("middleware: %d exported functions, types and methods (limit %d: %d functions, %d types, %d methods), %d vars, %d consts\n",
		api, maxAPI, exported["func"], exported["type"], exported["method"], exported["var"], exported["const"])
	if api > maxAPI {
		over++
	}
	if over > 0 {
		fmt.Printf("%d limits passed\n", over)
		os.Exit(1)
	}
}

// countExported adds decl's exported package-level names to n, by kind,
// and the exported methods of exported types as "method".
func countExported(decl ast.Decl, n map[string]int) {
	switch d := decl.(type) {
	case *ast.FuncDecl:
		switch {
		case !d.Name.IsExported():
		case d.Recv == nil:
			n["func"]++
		case receiverExported(d.Recv.List[0].Type):
			n["method"]++
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

// receiverExported reports whether a method's receiver type is exported.
func receiverExported(t ast.Expr) bool {
	for {
		switch e := t.(type) {
		case *ast.StarExpr:
			t = e.X
		case *ast.IndexExpr:
			t = e.X
		case *ast.IndexListExpr:
			t = e.X
		case *ast.Ident:
			return e.IsExported()
		default:
			return false
		}
	}
}
