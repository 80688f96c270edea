package kubernetes_test

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// dockerImage is what the Dockerfile's last stage says of the image.
type dockerImage struct {
	base       string   // FROM
	uid, gid   int64    // USER, numeric
	entrypoint []string // ENTRYPOINT, exec form
	cmd        []string // CMD, exec form
	copies     []string // COPY lines (their arguments)
	buildRuns  []string // RUN lines of the earlier stages
	buildBase  string   // FROM of the first stage
}

// readDockerfile reads the instructions of a Dockerfile (comments and
// line continuations handled; what the tests need, not a full parser).
func readDockerfile(t *testing.T, path string) dockerImage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var insts [][2]string
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		op, args, _ := strings.Cut(cur.String(), " ")
		insts = append(insts, [2]string{strings.ToUpper(op), strings.TrimSpace(args)})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var img dockerImage
	stages := 0
	for _, in := range insts {
		op, args := in[0], in[1]
		switch op {
		case "FROM":
			stages++
			if stages == 1 {
				img.buildBase = strings.Fields(args)[0]
			}
			img = dockerImage{buildBase: img.buildBase, buildRuns: img.buildRuns, base: strings.Fields(args)[0]}
		case "RUN":
			img.buildRuns = append(img.buildRuns, args)
		case "USER":
			u, g, _ := strings.Cut(args, ":")
			var e1, e2 error
			img.uid, e1 = strconv.ParseInt(u, 10, 64)
			img.gid, e2 = strconv.ParseInt(g, 10, 64)
			if e1 != nil || e2 != nil {
				t.Fatalf("%s: USER %s: want a numeric uid:gid (Kubernetes' runAsNonRoot checks numbers)", path, args)
			}
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(args), &img.entrypoint); err != nil {
				t.Fatalf("%s: ENTRYPOINT %s: want the exec form: %v", path, args, err)
			}
		case "CMD":
			if err := json.Unmarshal([]byte(args), &img.cmd); err != nil {
				t.Fatalf("%s: CMD %s: want the exec form: %v", path, args, err)
			}
		case "COPY":
			img.copies = append(img.copies, args)
		}
	}
	if stages < 2 {
		t.Fatalf("%s: %d stages, want a build stage and the image's", path, stages)
	}
	return img
}

// goDirective is the go line of the root module.
var goDirective = regexp.MustCompile(`(?m)^go (\d+\.\d+)`)

// TestDockerfile checks what docker would build without docker: the
// image is a static binary on a base without a shell, run as a non-root
// user, with the Go of go.mod; then builds the binary as the Dockerfile
// does and shows it static (no ELF interpreter) and running as that user.
func TestDockerfile(t *testing.T) {
	img := readDockerfile(t, "../../Dockerfile")
	if !strings.HasPrefix(img.base, "gcr.io/distroless/static") && img.base != "scratch" {
		t.Errorf("image base %q: want distroless static (or scratch): a static binary needs no more", img.base)
	}
	if img.uid == 0 || img.gid == 0 {
		t.Errorf("USER %d:%d: want a non-root user", img.uid, img.gid)
	}
	if len(img.entrypoint) != 1 || img.entrypoint[0] != "/usr/bin/quotesync" {
		t.Errorf("ENTRYPOINT %v, want [/usr/bin/quotesync]", img.entrypoint)
	}
	if len(img.cmd) == 0 || img.cmd[0] != "run" {
		t.Errorf("CMD %v, want run …", img.cmd)
	}
	copied := false
	for _, c := range img.copies {
		f := strings.Fields(c)
		copied = copied || (strings.HasPrefix(f[0], "--from=") && f[len(f)-1] == img.entrypoint[0])
	}
	if !copied {
		t.Errorf("no COPY --from=… puts the binary at %s: %v", img.entrypoint, img.copies)
	}
	var build string
	for _, r := range img.buildRuns {
		if strings.Contains(r, "go build") {
			build = r
		}
	}
	if !strings.Contains(build, "CGO_ENABLED=0") || !strings.HasSuffix(build, "./cmd/quotesync") {
		t.Errorf("build %q: want CGO_ENABLED=0 go build … ./cmd/quotesync", build)
	}
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if m := goDirective.FindSubmatch(mod); m == nil || !strings.Contains(img.buildBase, "golang:"+string(m[1])) {
		t.Errorf("build stage %q: want golang:%s, go.mod's Go", img.buildBase, m[1])
	}

	// A directory the image's user may enter (t.TempDir's parent is 0700).
	dir, err := os.MkdirTemp("", "quotesync-image-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "quotesync")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/quotesync")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build as the Dockerfile does: %v\n%s", err, out)
	}
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary has a %v program header: not static, it would not run on %s", p.Type, img.base)
		}
	}
	ef.Close()
	run := exec.Command(bin, "version")
	if os.Geteuid() == 0 {
		run.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(img.uid), Gid: uint32(img.gid)}}
	} else {
		t.Logf("not root: the binary runs as this user, not as %d:%d", img.uid, img.gid)
	}
	if out, err := run.CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "quotesync ") {
		t.Errorf("quotesync version as %d:%d: %v %s", img.uid, img.gid, err, out)
	}
}

// TestSiteConfigValidates runs each rendered site's file through the real
// quotesync (`quotesync config`, which validates every key): the
// non-loopback listener, the secrets' paths, the mapping.
func TestSiteConfigValidates(t *testing.T) {
	bin := os.Getenv("QUOTESYNC_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "quotesync")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/quotesync")
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build quotesync: %v\n%s", err, out)
		}
	}
	for _, s := range renderSites(t) {
		t.Run(s.name, func(t *testing.T) {
			dir := t.TempDir()
			conf := filepath.Join(dir, configFile)
			if err := os.WriteFile(conf, []byte(s.configMap.Data[configFile]), 0o644); err != nil {
				t.Fatal(err)
			}
			for k, v := range s.secret.Data {
				if err := os.WriteFile(filepath.Join(dir, k), v, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(bin, "config", "--config", conf, "--site", s.name)
			cmd.Env = append(os.Environ(), "CREDENTIALS_DIRECTORY="+dir)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("quotesync config on %s's file: %v\n%s", s.name, err, out)
			}
		})
	}
}
