package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// checkIPL reports an error unless the typed methods of ipl.WriteMessage and
// ipl.ReadMessage in file are exactly the table's, in its order:
// WriteName(v T) error and ReadName() (T, error).
func checkIPL(file string) error {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	for _, side := range []string{"Write", "Read"} {
		iface := findInterface(f, side+"Message")
		if iface == nil {
			return fmt.Errorf("%s: no interface ipl.%sMessage", file, side)
		}
		var got []string
		for _, m := range iface.Methods.List {
			ft, ok := m.Type.(*ast.FuncType)
			if !ok || len(m.Names) != 1 {
				continue
			}
			if sig := primSignature(side, m.Names[0].Name, ft); sig != "" {
				got = append(got, sig)
			}
		}
		var want []string
		for _, p := range prims {
			if side == "Write" {
				want = append(want, fmt.Sprintf("Write%s(%s) error", p.Name, p.Go))
			} else {
				want = append(want, fmt.Sprintf("Read%s() (%s, error)", p.Name, p.Go))
			}
		}
		if strings.Join(got, "; ") != strings.Join(want, "; ") {
			return fmt.Errorf("ipl.%sMessage's typed methods differ from genprims' table:\n ipl:   %s\n table: %s",
				side, strings.Join(got, "; "), strings.Join(want, "; "))
		}
	}
	return nil
}

func findInterface(f *ast.File, name string) *ast.InterfaceType {
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, s := range gd.Specs {
			if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.Name == name {
				it, _ := ts.Type.(*ast.InterfaceType)
				return it
			}
		}
	}
	return nil
}

// primSignature renders a method shaped like a typed primitive call (one
// value in or out, named by an identifier other than any, and an error), or
// "" for any other method of the interface.
func primSignature(side, name string, ft *ast.FuncType) string {
	if !strings.HasPrefix(name, side) {
		return ""
	}
	params, results := fieldTypes(ft.Params), fieldTypes(ft.Results)
	switch {
	case side == "Write" && len(params) == 1 && params[0] != "any" && len(results) == 1 && results[0] == "error":
		return fmt.Sprintf("%s(%s) error", name, params[0])
	case side == "Read" && len(params) == 0 && len(results) == 2 && results[0] != "any" && results[1] == "error":
		return fmt.Sprintf("%s() (%s, error)", name, results[0])
	}
	return ""
}

// fieldTypes lists the type names of a field list, one per value; a type
// that is not a plain identifier is "?".
func fieldTypes(fl *ast.FieldList) []string {
	if fl == nil {
		return nil
	}
	var out []string
	for _, f := range fl.List {
		t := "?"
		if id, ok := f.Type.(*ast.Ident); ok {
			t = id.Name
		}
		for range max(len(f.Names), 1) {
			out = append(out, t)
		}
	}
	return out
}
