package poolsecrets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/internal/poolauth"
)

func writeFile(t *testing.T, path, content string, mode os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // whatever the umask
		t.Fatal(err)
	}
	return path
}

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestPoolFile(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, filepath.Join(dir, "good"), "# pools\n\nrun42  s e c r e t \n\trun43\tother\n", 0o600)
	secrets, err := LoadPoolFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(secrets) != 2 || string(secrets["run42"]) != "s e c r e t" || string(secrets["run43"]) != "other" {
		t.Fatalf("secrets %q", secrets)
	}
	for name, content := range map[string]string{
		"no secret":   "run42\n",
		"twice":       "a x\na y\n",
		"empty":       "# nothing\n",
		"long pool":   strings.Repeat("p", poolauth.MaxPoolName+1) + " x\n",
		"long secret": "p " + strings.Repeat("s", poolauth.MaxSecretSize+1) + "\n",
		"huge file":   strings.Repeat("# padding\n", MaxPoolSecretsFile/10+1),
	} {
		if _, err := LoadPoolFile(writeFile(t, filepath.Join(dir, "bad"), content, 0o600)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := LoadPoolFile(writeFile(t, filepath.Join(dir, "public"), "a x\n", 0o604)); err == nil {
		t.Error("world-readable file accepted")
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	private := writeFile(t, filepath.Join(dir, "secret"), "s3cret\n", 0o600)
	public := writeFile(t, filepath.Join(dir, "public"), "s3cret\n", 0o644)
	for _, c := range []struct {
		name, file string
		env        map[string]string
		every      string // the secret for every pool; "" with errText: an error
		errText    string
	}{
		{"open", "", nil, "", ""},
		{"flag", private, nil, "s3cret", ""},
		{"world-readable flag", public, nil, "", "every user"},
		{"missing", filepath.Join(dir, "none"), nil, "", "no such file"},
		{"environment", "", map[string]string{EnvSecret: "x"}, "x", ""},
		{"environment file", "", map[string]string{EnvSecretFile: private}, "s3cret", ""},
		{"world-readable environment file", "", map[string]string{EnvSecretFile: public}, "", "every user"},
		{"both in the environment", "", map[string]string{EnvSecret: "x", EnvSecretFile: private}, "", "give one"},
		{"flag over environment", private, map[string]string{EnvSecret: "x"}, "s3cret", ""},
	} {
		s, err := Load(c.file, "", envOf(c.env))
		switch {
		case c.errText != "":
			if err == nil || !strings.Contains(err.Error(), c.errText) {
				t.Errorf("%s: %v, want an error saying %q", c.name, err, c.errText)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case string(s.Every.Bytes()) != c.every:
			t.Errorf("%s: secret %q, want %q", c.name, s.Every.Bytes(), c.every)
		}
	}
}

func TestLookup(t *testing.T) {
	if (Secrets{}).Lookup() != nil {
		t.Fatal("no secrets should give no lookup (an open server)")
	}
	own := map[string][]byte{"run42": []byte("own")}
	every := poolauth.New([]byte("every"))
	l := Secrets{Every: every, Pools: own}.Lookup()
	if k, ok := l("run42"); !ok || string(k.Bytes()) != "own" {
		t.Errorf("listed pool: %q %v", k.Bytes(), ok)
	}
	if k, ok := l("other"); !ok || !k.Equal(every) {
		t.Errorf("other pool: %q %v", k.Bytes(), ok)
	}
	l = Secrets{Pools: own}.Lookup()
	if _, ok := l("other"); ok {
		t.Error("without a secret for every pool, an unlisted pool is served")
	}
	if s := (Secrets{Pools: own}).Summary(); !strings.Contains(s, "secrets for 1 pools, which alone are served") {
		t.Errorf("summary %q", s)
	}
}
