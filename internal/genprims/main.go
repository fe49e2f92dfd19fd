// Command genprims writes the code of the typed primitives of a message (bool, byte,
// int8 ... float64, string) from one table (table.go): core's forwarding methods and
// serialization's fixed-size readers, writers and array dispatch. It first checks that
// ipl.WriteMessage and ipl.ReadMessage, which stay hand-written as the API's
// documentation, list the same primitives in the same order.
//
// It is run by go generate in the package it writes (see the package's generate.go):
//
//	go run github.com/ibisgo/ibis/internal/genprims -pkg core
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// outputs maps a package to the files generated in it and their templates.
var outputs = map[string]map[string]string{
	"core": {
		"forward.go": coreForward,
	},
	"serialization": {
		"writer_prim_gen.go": serWriter,
		"reader_prim_gen.go": serReader,
		"array_prim_gen.go":  serArrays,
	},
}

// pkgDirs is where each package lives, relative to the module root.
var pkgDirs = map[string]string{
	"core":          "impl/internal/core",
	"serialization": "serialization",
}

func main() {
	pkg := flag.String("pkg", "", "the package to write: core or serialization")
	dir := flag.String("dir", ".", "the package's directory")
	flag.Parse()
	if err := run(*pkg, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "genprims:", err)
		os.Exit(1)
	}
}

func run(pkg, dir string) error {
	root, err := moduleRoot(dir)
	if err != nil {
		return err
	}
	if err := checkIPL(filepath.Join(root, "ipl", "message.go")); err != nil {
		return err
	}
	files, err := generate(pkg)
	if err != nil {
		return err
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// generate returns the gofmt'ed files of pkg by name.
func generate(pkg string) (map[string][]byte, error) {
	tmpls, ok := outputs[pkg]
	if !ok {
		return nil, fmt.Errorf("unknown package %q (want core or serialization)", pkg)
	}
	funcs := template.FuncMap{
		"doc":  func(s string) string { return strings.ReplaceAll(s, "\n", "\n// ") },
		"zero": zero,
	}
	files := make(map[string][]byte, len(tmpls))
	for name, text := range tmpls {
		t, err := template.New(name).Funcs(funcs).Parse(text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, prims); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		src, err := format.Source(buf.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s: gofmt: %w\n%s", name, err, buf.Bytes())
		}
		files[name] = src
	}
	return files, nil
}

// moduleRoot is the nearest directory at or above dir holding go.mod.
func moduleRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod at or above %s", dir)
		}
		d = parent
	}
}

// zero is the literal of T's zero value.
func zero(goType string) string {
	switch goType {
	case "bool":
		return "false"
	case "string":
		return `""`
	}
	return "0"
}
