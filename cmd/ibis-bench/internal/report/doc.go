// Package report holds what an ibis-bench experiment produces — tables, curves and
// fitted values — and writes it three ways: aligned text for a terminal, JSON for
// scripts, and PNG or SVG plots (gonum/plot) for documents.
//
// Experiments build a Report and never print themselves, so every subcommand gets the
// same -json and -plot handling from the command-line framework for free.
package report
