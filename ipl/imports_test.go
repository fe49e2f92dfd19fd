package ipl

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestContractImportsNoImplementation: ipl is the contract, so it imports no package of
// this module but internal helpers; the registry and the implementations import it.
func TestContractImportsNoImplementation(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/ibisgo/ibis/"
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, module) && !strings.HasPrefix(path, module+"internal/") {
				t.Errorf("%s imports %s: the contract may import only the module's internal packages", name, path)
			}
		}
	}
}
