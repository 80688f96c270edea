package systemd_test

import (
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testVersion is the version TestDeb builds with (git describe form).
const (
	testVersion    = "v1.2.3-4-gabcdef1"
	testDebVersion = "1.2.3+git4.gabcdef1"
)

// debArch maps GOARCH to Debian's architecture names.
var debArch = map[string]string{
	"amd64": "amd64", "arm64": "arm64", "386": "i386", "arm": "armhf",
	"ppc64le": "ppc64el", "riscv64": "riscv64", "s390x": "s390x",
}

// TestDebianVersion checks systemd/deb/version.sh: the mapping from git
// describe output to Debian versions, and that dpkg orders the results the
// way the builds were made.
func TestDebianVersion(t *testing.T) {
	dpkg := MustTool(t, "dpkg", "dpkg")
	debianVersion := func(t *testing.T, v string) (string, bool) {
		t.Helper()
		stdout, _, code := run(t, nil, "bash", "-c", `. deb/version.sh && debian_version "$1"`, "_", v)
		return strings.TrimSpace(stdout), code == 0
	}

	tests := []struct {
		in, want string // want "" = refused
	}{
		{"v1.2.3", "1.2.3"},
		{"1.2.3", "1.2.3"},
		{"v1.2.3-4-gabc1234", "1.2.3+git4.gabc1234"},
		{"v1.2.3-4-gabc1234-dirty", "1.2.3+git4.gabc1234.dirty"},
		{"v1.2.0-rc1", "1.2.0~rc1"},
		{"v1.2.0-rc1-2-gabc1234", "1.2.0~rc1+git2.gabc1234"},
		{"dev", "0~dev"},
		{"abc1234", "0~abc1234"},
		{"5e2f0a1-dirty", "0~5e2f0a1~dirty"},
		{"", ""},
		{"v", ""},
		{"1.2 3", ""},
		{"1.2/3", ""},
		{"-1", ""},
	}
	for _, tt := range tests {
		got, ok := debianVersion(t, tt.in)
		if !ok {
			got = ""
		}
		if got != tt.want {
			t.Errorf("debian_version(%q) = %q (ok=%v), want %q", tt.in, got, ok, tt.want)
		}
	}

	ordered := [][2]string{ // each pair: older build, newer build
		{"dev", "v0.0.1"},
		{"abc1234", "v0.1.0"},
		{"v1.2.0-rc1", "v1.2.0-rc1-2-gabc1234"},
		{"v1.2.0-rc1-2-gabc1234", "v1.2.0"},
		{"v1.2.3", "v1.2.3-4-gabc1234"},
		{"v1.2.3-4-gabc1234", "v1.2.3-10-gdef5678"},
		{"v1.2.3-10-gdef5678", "v1.2.4"},
	}
	for _, p := range ordered {
		older, _ := debianVersion(t, p[0])
		newer, _ := debianVersion(t, p[1])
		if _, _, code := run(t, nil, dpkg, "--compare-versions", older, "lt", newer); code != 0 {
			t.Errorf("dpkg --compare-versions %s lt %s is false (from %s, %s)", older, newer, p[0], p[1])
		}
	}
}

// debBinary returns the quotesync binary to package: $QUOTESYNC_BIN when set
// (fast: `make build` made it), else a fresh build of ./cmd/quotesync with
// testVersion. built says whether the binary carries testVersion.
func debBinary(t *testing.T, root string) (path string, built bool) {
	t.Helper()
	if p := os.Getenv("QUOTESYNC_BIN"); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return abs, false
	}
	path = filepath.Join(t.TempDir(), "quotesync")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version="+testVersion, "-o", path, "./cmd/quotesync")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build ./cmd/quotesync (set QUOTESYNC_BIN to package a binary built elsewhere): %v\n%s", err, out)
	}
	return path, true
}

// configSource is the file the package installs as /etc/quotesync/config.yaml.
func configSource(root string) string {
	if p := os.Getenv("QUOTESYNC_CONFIG_EXAMPLE"); p != "" {
		return p
	}
	return filepath.Join(root, "config.example.yaml")
}

// TestDeb builds the package with systemd/build-deb and inspects it with
// dpkg-deb: control fields, the exact file list with modes and owners, the
// conffile, the maintainer scripts, the installed bytes; then installs it
// with dpkg into a throwaway root.
func TestDeb(t *testing.T) {
	dpkgDeb := MustTool(t, "dpkg-deb", "dpkg")
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	arch, ok := debArch[runtime.GOARCH]
	if !ok {
		t.Fatalf("no Debian architecture name known for GOARCH=%s: add it to debArch", runtime.GOARCH)
	}
	bin, built := debBinary(t, root)
	dist := t.TempDir()

	start := time.Now()
	stdout, stderr, code := run(t, []string{"QUOTESYNC_BIN=" + bin, "QUOTESYNC_DIST=" + dist},
		"bash", filepath.Join(root, "systemd", "build-deb"), testVersion)
	if code != 0 {
		t.Fatalf("systemd/build-deb %s: exit %d\n%s", testVersion, code, stderr)
	}
	deb := filepath.Join(dist, "quotesync_"+testDebVersion+"_"+arch+".deb")
	if got, want := stdout, deb+"\n"; got != want {
		t.Fatalf("build-deb printed %q, want %q (only the path on stdout)", got, want)
	}
	info, err := os.Stat(deb)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("build-deb took %v; %s is %d bytes", time.Since(start).Round(time.Millisecond), filepath.Base(deb), info.Size())

	t.Run("Control", func(t *testing.T) { checkControl(t, dpkgDeb, deb, arch) })
	t.Run("Contents", func(t *testing.T) { checkContents(t, dpkgDeb, deb, root) })
	t.Run("MaintainerScripts", func(t *testing.T) { checkScripts(t, dpkgDeb, deb) })
	t.Run("Files", func(t *testing.T) { checkFiles(t, dpkgDeb, deb, root, bin, built) })
	t.Run("Install", func(t *testing.T) { checkInstall(t, deb) })
}

// TestBuildDebMissingConfig checks that build-deb refuses, with a message
// naming the file, when the example config is missing.
func TestBuildDebMissingConfig(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "config.example.yaml")
	stdout, stderr, code := run(t, []string{"QUOTESYNC_CONFIG_EXAMPLE=" + missing, "QUOTESYNC_BIN=/nonexistent", "QUOTESYNC_DIST=" + t.TempDir()},
		"bash", "build-deb", testVersion)
	if code == 0 || stdout != "" {
		t.Fatalf("build-deb without a config: exit %d, stdout %q; want a failure and no path", code, stdout)
	}
	if want := missing + " is missing"; !strings.Contains(stderr, want) || !strings.Contains(stderr, "/etc/quotesync/config.yaml") {
		t.Errorf("stderr %q should say %q and name /etc/quotesync/config.yaml", stderr, want)
	}
}

// identity reads systemd/deb/identity, the package's maintainer and
// homepage in one place.
func identity(t *testing.T) (maintainer, homepage string) {
	t.Helper()
	vals := map[string]string{}
	for _, line := range strings.Split(MustReadFile(t, filepath.Join("deb", "identity")), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(k, "#") {
			vals[k] = strings.Trim(v, "'")
		}
	}
	maintainer, homepage = vals["QS_MAINTAINER"], vals["QS_HOMEPAGE"]
	if maintainer == "" || homepage == "" || strings.Contains(maintainer+homepage, "example.invalid") {
		t.Fatalf("deb/identity: QS_MAINTAINER %q, QS_HOMEPAGE %q: want both set, neither on example.invalid", maintainer, homepage)
	}
	return maintainer, homepage
}

func checkControl(t *testing.T, dpkgDeb, deb, arch string) {
	fields := []string{"Package", "Version", "Architecture", "Section", "Priority", "Maintainer", "Homepage", "Depends", "Recommends", "Suggests"}
	stdout, stderr, code := run(t, nil, dpkgDeb, append([]string{"--field", deb}, fields...)...)
	if code != 0 {
		t.Fatalf("dpkg-deb --field: exit %d: %s", code, stderr)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		got[k] = v
	}
	maintainer, homepage := identity(t)
	want := map[string]string{
		"Package":      "quotesync",
		"Version":      testDebVersion,
		"Architecture": arch,
		"Section":      "net",
		"Priority":     "optional",
		"Maintainer":   maintainer,
		"Homepage":     homepage,
		"Depends":      "adduser",
		"Recommends":   "ca-certificates",
		"Suggests":     "default-mysql-client",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("control fields (-want +got):\n%s", diff)
	}
	desc, _, _ := run(t, nil, dpkgDeb, "--field", deb, "Description")
	if synopsis, _, _ := strings.Cut(desc, "\n"); synopsis == "" || len(synopsis) > 80 {
		t.Errorf("Description synopsis %q: want 1 to 80 characters", synopsis)
	}
}

// checkContents compares the package's file list, with modes and owners,
// against the complete expected list.
func checkContents(t *testing.T, dpkgDeb, deb, root string) {
	stdout, stderr, code := run(t, nil, dpkgDeb, "--contents", deb)
	if code != 0 {
		t.Fatalf("dpkg-deb --contents: exit %d: %s", code, stderr)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		f := strings.Fields(line) // mode owner/group size date time path
		if len(f) != 6 {
			t.Fatalf("unexpected dpkg-deb --contents line %q", line)
		}
		got[f[5]] = f[0] + " " + f[1]
	}
	const dir, file, exe = "drwxr-xr-x root/root", "-rw-r--r-- root/root", "-rwxr-xr-x root/root"
	want := map[string]string{
		"./etc/":                       dir,
		"./etc/quotesync/":             dir,
		"./etc/quotesync/config.yaml":  "-rw-r----- root/root", // group set by postinst
		"./etc/quotesync/credentials/": "drwx------ root/root",
		"./usr/":                       dir,
		"./usr/bin/":                   dir,
		"./usr/bin/quotesync":          exe,
		"./usr/lib/":                   dir,
		"./usr/lib/systemd/":           dir,
		"./usr/lib/systemd/system/":    dir,
		"./usr/lib/systemd/system/quotesync.service":  file,
		"./usr/lib/systemd/system/quotesync@.service": file,
		"./etc/quotesync/sites/":                      dir,
		"./usr/share/":                                dir,
		"./usr/share/doc/":                            dir,
		"./usr/share/doc/quotesync/":                  dir,
		"./usr/share/doc/quotesync/README.Debian":     file,
		"./usr/share/doc/quotesync/copyright":         file,
		"./usr/share/doc/quotesync/changelog.gz":      file,
		"./usr/share/man/":                            dir,
		"./usr/share/man/man8/":                       dir,
		"./usr/share/man/man8/quotesync.8.gz":         file,
	}
	if _, err := os.Stat(filepath.Join(root, "README.md")); err == nil {
		want["./usr/share/doc/quotesync/README.md"] = file
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) > 0 {
		want["./usr/share/doc/quotesync/docs/"] = dir
	}
	for _, p := range pages {
		want["./usr/share/doc/quotesync/docs/"+filepath.Base(p)] = file
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("package contents (-want +got):\n%s", diff)
	}
}

// startsService matches a command that would enable or start the unit; the
// upgrade path's try-restart (only acts on a running unit) does not match.
var startsService = regexp.MustCompile(`\b(systemctl|deb-systemd-invoke|deb-systemd-helper)\s+(--\S+\s+)*(start|restart|enable|reenable|reload-or-restart|unmask)\b|\b(invoke-rc\.d|service)\s+quotesync\b`)

func checkScripts(t *testing.T, dpkgDeb, deb string) {
	ctrl := filepath.Join(t.TempDir(), "DEBIAN")
	if _, stderr, code := run(t, nil, dpkgDeb, "--control", deb, ctrl); code != 0 {
		t.Fatalf("dpkg-deb --control: exit %d: %s", code, stderr)
	}
	entries, err := os.ReadDir(ctrl)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"conffiles", "control", "md5sums", "postinst", "postrm", "prerm"}, names); diff != "" {
		t.Errorf("control members (-want +got):\n%s", diff)
	}
	if got, want := MustReadFile(t, filepath.Join(ctrl, "conffiles")), "/etc/quotesync/config.yaml\n"; got != want {
		t.Errorf("conffiles = %q, want %q", got, want)
	}
	for _, name := range []string{"postinst", "prerm", "postrm"} {
		path := filepath.Join(ctrl, name)
		text := MustReadFile(t, path)
		if src := MustReadFile(t, filepath.Join("deb", name)); text != src {
			t.Errorf("%s in the package differs from systemd/deb/%s", name, name)
		}
		if st, err := os.Stat(path); err != nil || st.Mode().Perm()&0o111 == 0 {
			t.Errorf("%s is not executable (%v)", name, err)
		}
		if _, stderr, code := run(t, nil, "sh", "-n", path); code != 0 {
			t.Errorf("sh -n %s: %s", name, stderr)
		}
		for n, line := range strings.Split(text, "\n") {
			if code, _, _ := strings.Cut(line, "#"); startsService.MatchString(code) {
				t.Errorf("%s line %d would start or enable the service: %q", name, n+1, line)
			}
		}
	}
}

// checkFiles unpacks the package and compares what it installs with the
// sources, and runs the packaged binary.
func checkFiles(t *testing.T, dpkgDeb, deb, root, bin string, built bool) {
	dir := t.TempDir()
	if _, stderr, code := run(t, nil, dpkgDeb, "--extract", deb, dir); code != 0 {
		t.Fatalf("dpkg-deb --extract: exit %d: %s", code, stderr)
	}
	same := map[string]string{
		"usr/bin/quotesync":                         bin,
		"etc/quotesync/config.yaml":                 configSource(root),
		"usr/lib/systemd/system/quotesync.service":  unitPath,
		"usr/lib/systemd/system/quotesync@.service": templatePath,
		"usr/share/doc/quotesync/copyright":         filepath.Join(root, "LICENSE"),
		"usr/share/doc/quotesync/README.Debian":     "README.md",
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		same["usr/share/doc/quotesync/docs/"+filepath.Base(p)] = p
	}
	for installed, src := range same {
		if MustReadFile(t, filepath.Join(dir, installed)) != MustReadFile(t, src) {
			t.Errorf("/%s differs from %s", installed, src)
		}
	}
	stdout, stderr, code := run(t, nil, filepath.Join(dir, "usr/bin/quotesync"), "version")
	if code != 0 || !strings.HasPrefix(stdout, "quotesync ") {
		t.Fatalf("packaged quotesync version: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if built && !strings.Contains(stdout, testVersion) {
		t.Errorf("packaged quotesync version = %q, want it to carry %s", stdout, testVersion)
	}
	if got, want := gunzip(t, filepath.Join(dir, "usr/share/doc/quotesync/changelog.gz")), MustReadFile(t, filepath.Join(root, "CHANGELOG.md")); got != want {
		t.Errorf("/usr/share/doc/quotesync/changelog.gz differs from CHANGELOG.md")
	}
	checkManPage(t, dir)
}

// gunzip returns the content of a gzip file.
func gunzip(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(b)
}

// checkManPage: the installed quotesync(8) has a section for every
// command the packaged binary lists in its help, and man renders it.
func checkManPage(t *testing.T, dir string) {
	page := gunzip(t, filepath.Join(dir, "usr/share/man/man8/quotesync.8.gz"))
	help, _, code := run(t, nil, filepath.Join(dir, "usr/bin/quotesync"), "--help")
	if code != 0 {
		t.Fatalf("packaged quotesync --help: exit %d", code)
	}
	_, list, _ := strings.Cut(help, "Commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	n := 0
	for _, line := range strings.Split(list, "\n") {
		name := strings.Fields(line)[0]
		n++
		if !strings.Contains(page, `.SS "quotesync `+strings.ReplaceAll(name, "-", `\-`)+`"`) {
			t.Errorf("the man page has no section for quotesync %s", name)
		}
	}
	if n < 8 {
		t.Errorf("found %d commands in quotesync --help; the parse of its Commands: list is broken", n)
	}
	if groff, err := exec.LookPath("groff"); err == nil {
		cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z")
		cmd.Stdin = strings.NewReader(page)
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("groff -man -ww on the installed man page: %v\n%s", err, out)
		}
	}
}

// TestBuildDebRefuses: build-deb stops, naming what is missing, when the
// package would lack its changelog, its identity, or a command's page in
// the man page.
func TestBuildDebRefuses(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bin, _ := debBinary(t, root)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	page, _, code := run(t, nil, bin, "manpage")
	if code != 0 {
		t.Fatalf("quotesync manpage: exit %d", code)
	}
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"NoChangelog", []string{"QUOTESYNC_CHANGELOG=" + filepath.Join(dir, "CHANGELOG.md")}, "CHANGELOG.md is missing"},
		{"NoIdentity", []string{"QUOTESYNC_IDENTITY=" + filepath.Join(dir, "none")}, "sets QS_MAINTAINER and QS_HOMEPAGE"},
		{"PlaceholderIdentity", []string{"QUOTESYNC_IDENTITY=" + write("invalid", "QS_MAINTAINER='x <x@example.invalid>'\nQS_HOMEPAGE='https://example.invalid/x'\n")}, "example.invalid"},
		{"NoMaintainer", []string{"QUOTESYNC_IDENTITY=" + write("nomaint", "QS_HOMEPAGE='https://quotesync.test/'\n")}, "write 'Name <address>'"},
		{"ManPageMissesAVerb", []string{"QUOTESYNC_MANPAGE=" + write("quotesync.8", strings.ReplaceAll(page, `.SS "quotesync sync\-now"`, ".SS other"))}, "no section for 'quotesync sync-now'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append([]string{"QUOTESYNC_BIN=" + bin, "QUOTESYNC_DIST=" + t.TempDir()}, tt.env...)
			stdout, stderr, code := run(t, env, "bash", "build-deb", testVersion)
			if code == 0 || stdout != "" {
				t.Fatalf("build-deb: exit %d, stdout %q; want a failure and no path", code, stdout)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q should say %q", stderr, tt.want)
			}
		})
	}
}
