package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

func TestStoreFlag(t *testing.T) {
	for _, tc := range []struct {
		flag string
		want []string
	}{
		{"memory", nil},
		{"etcd://127.0.0.1:2379", []string{"127.0.0.1:2379"}},
		{"etcd://a:1, b:2,[::1]:3", []string{"a:1", "b:2", "[::1]:3"}},
	} {
		cfg, err := parseFlags([]string{"-store", tc.flag}, noEnv, io.Discard)
		if err != nil || !slices.Equal(cfg.etcd, tc.want) {
			t.Errorf("-store %s: %q, %v; want %q", tc.flag, cfg.etcd, err, tc.want)
		}
	}
	cfg, err := parseFlags(nil, noEnv, io.Discard)
	if err != nil || cfg.etcd != nil {
		t.Fatalf("default store: %q, %v", cfg.etcd, err)
	}
	for _, bad := range []string{"", "etcd", "etcd://", "etcd://host", "etcd://:2379", "etcd://a:1,", "etcd://a:x", "etcd://a:0",
		"http://a:1", "Memory"} {
		_, err := parseFlags([]string{"-store", bad}, noEnv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "-store") {
			t.Errorf("-store %q: %v, want an error naming the flag", bad, err)
		}
	}
}
