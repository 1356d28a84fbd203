package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/schemas"
)

// The uid and gid of distroless' nonroot user, which the image runs as.
const imageUID = "65532"

// TestImage builds the repository's Dockerfile with buildah (no daemon) on local stand-ins
// for its two base images, then runs the image's entrypoint as the image's user on a
// read-only root: /healthz, an offline turn, and SIGTERM with a stream running, which must
// end with its result before the process exits 0.
//
// It needs buildah and root (`make deps` installs buildah); without them it skips, unless
// the environment variable CI is set, in which case it fails.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: needs buildah and root to build a container image")
	}
	b := newImageBuilder(t)
	suffix := imageSuffix(t)
	goImage := b.goImage(t, "localhost/genui-image-test-go-"+suffix)
	runtimeImage := b.runtimeImage(t, "localhost/genui-image-test-static-"+suffix)
	image := "localhost/genui-image-test-" + suffix
	b.build(t, image, goImage, runtimeImage)

	cfg := b.imageConfig(t, image)
	if cfg.User != imageUID+":"+imageUID {
		t.Errorf("image user %q, want %s:%s (distroless nonroot, numeric)", cfg.User, imageUID, imageUID)
	}
	if _, ok := cfg.ExposedPorts["3400/tcp"]; !ok {
		t.Errorf("image exposes %v, want 3400/tcp", cfg.ExposedPorts)
	}
	if !slices.Contains(cfg.Env, "GENUI_LOG_FORMAT=json") {
		t.Errorf("image env %v lacks GENUI_LOG_FORMAT=json", cfg.Env)
	}
	if len(cfg.Entrypoint) != 1 || cfg.Entrypoint[0] != "/usr/local/bin/genui-server" {
		t.Fatalf("image entrypoint %q", cfg.Entrypoint)
	}
	ctr := b.readOnlyContainer(t, image, "genui-image-test-"+suffix)

	t.Run("OfflineTurn", func(t *testing.T) {
		c := b.start(t, ctr, cfg.Entrypoint, "GENUI_MODEL=offline")
		c.checkProcess(t)
		if !strings.Contains(c.logs.String(), `"msg":"genui-server listening"`) {
			t.Errorf("logs are not JSON (GENUI_LOG_FORMAT=json):\n%s", c.logs.String())
		}
		catalog, _ := schemas.SampleCatalog("basic")
		res, err := http.Post(c.base+"/startSession", "application/json",
			strings.NewReader(fmt.Sprintf(`{"data":{"protocolVersion":"0.1.0","catalog":%s}}`, mustMarshal(catalog))))
		if err != nil {
			t.Fatal(err)
		}
		var session struct{ Result string }
		err = json.NewDecoder(res.Body).Decode(&session)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 || session.Result == "" {
			t.Fatalf("startSession: %d %+v %v", res.StatusCode, session, err)
		}
		res, err = http.Post(c.base+"/generateUi", "application/json", strings.NewReader(fmt.Sprintf(
			`{"data":{"sessionId":%q,"conversation":[{"role":"user","parts":[{"type":"text","text":"Hello"}]}]}}`, session.Result)))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("generateUi: %d %v\n%s", res.StatusCode, err, body)
		}
		lines := strings.Split(strings.TrimSpace(string(body)), "\n")
		if !strings.Contains(string(body), `"name":"addOrUpdateSurface"`) || !strings.HasPrefix(lines[len(lines)-1], `{"type":"result"`) {
			t.Fatalf("offline turn:\n%s", body)
		}
		c.stop(t)
	})

	t.Run("SIGTERMDrainsStream", func(t *testing.T) {
		fake := fakegemini.New(fakegemini.WithPacing(300 * time.Millisecond))
		defer fake.Close()
		surface := map[string]any{"surfaceId": "s1", "definition": map[string]any{"root": "t", "widgets": []any{
			map[string]any{"id": "t", "widget": map[string]any{"Text": map[string]any{"text": "hi"}}}}}}
		fake.Enqueue(fakegemini.Respond(fakegemini.Text("one"), fakegemini.Text("two"), fakegemini.Text("three"), fakegemini.FunctionCall("addOrUpdateSurface", surface)))
		c := b.start(t, ctr, cfg.Entrypoint, "GENUI_MODEL=googleai/gemini-2.5-flash", "GENUI_DRAIN_TIMEOUT=20s",
			"GOOGLE_GEMINI_BASE_URL="+fake.URL(), "GEMINI_API_KEY=k")
		c.checkProcess(t)

		catalog, _ := schemas.SampleCatalog("basic")
		body := fmt.Sprintf(`{"catalog":%s,"conversation":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}`, mustMarshal(catalog))
		res, err := http.Post(c.base+"/generateUi", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		r := bufio.NewReader(res.Body)
		first, err := r.ReadString('\n')
		if err != nil || !strings.Contains(first, `"text":"one"`) {
			t.Fatalf("first line %q %v\n%s", first, err, c.logs.String())
		}
		if err := syscall.Kill(c.pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		rest, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("stream cut by shutdown: %v\n%s", err, c.logs.String())
		}
		if lines := strings.Split(strings.TrimSpace(string(rest)), "\n"); !strings.HasPrefix(lines[len(lines)-1], `{"type":"result"`) {
			t.Fatalf("stream did not finish with its result:\n%s", rest)
		}
		c.wait(t)
		if !strings.Contains(c.logs.String(), "draining") {
			t.Fatalf("logs:\n%s", c.logs.String())
		}
	})
}

// imageBuilder runs buildah on a storage of its own (vfs driver, chroot isolation), removed
// with everything in it when the test ends.
type imageBuilder struct {
	bin   string
	flags []string
	dir   string
}

func newImageBuilder(t *testing.T) *imageBuilder {
	t.Helper()
	unavailable := t.Skip
	if os.Getenv("CI") != "" {
		unavailable = t.Fatal
	}
	bin, err := exec.LookPath("buildah")
	if err != nil {
		unavailable("buildah is not on PATH (apt-get install buildah, or make deps):", err)
	}
	if os.Geteuid() != 0 {
		unavailable("buildah without a daemon (vfs storage, chroot isolation) needs root here; running as uid", os.Geteuid())
	}
	dir, err := os.MkdirTemp("", "genui-image-test")
	if err != nil {
		t.Fatal(err)
	}
	b := &imageBuilder{bin: bin, dir: dir, flags: []string{"--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "run"), "--storage-driver", "vfs"}}
	t.Cleanup(func() {
		// Containers first (their mounts with them), then images, then the storage.
		_, _ = b.cmd("rm", "--all").CombinedOutput()
		_, _ = b.cmd("rmi", "--all", "--force").CombinedOutput()
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("removing the image storage: %v", err)
		}
	})
	if out, err := b.cmd("info").CombinedOutput(); err != nil {
		unavailable(fmt.Sprintf("buildah cannot run here (buildah --storage-driver vfs info): %v\n%s", err, out))
	}
	return b
}

func (b *imageBuilder) cmd(args ...string) *exec.Cmd {
	return exec.Command(b.bin, append(slices.Clone(b.flags), args...)...)
}

// run runs buildah and returns its output, trimmed.
func (b *imageBuilder) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := b.cmd(args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("buildah %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return strings.TrimSpace(string(out))
}

// fromScratch commits, as name, an empty container whose root filesystem fill fills.
func (b *imageBuilder) fromScratch(t *testing.T, name string, fill func(root string), config ...string) string {
	t.Helper()
	ctr := b.run(t, "from", "scratch")
	fill(b.run(t, "mount", ctr))
	b.run(t, append(append([]string{"config"}, config...), ctr)...)
	b.run(t, "commit", "--quiet", ctr, name)
	b.run(t, "rm", ctr)
	return name
}

// goImage stands in for golang:1.26-bookworm: the host's Go toolchain in /usr/local/go,
// CA certificates and /tmp; no shell, as the Dockerfile's RUN steps need none.
func (b *imageBuilder) goImage(t *testing.T, name string) string {
	t.Helper()
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	src := strings.TrimSpace(string(goroot))
	return b.fromScratch(t, name, func(root string) {
		dst := filepath.Join(root, "usr/local/go")
		imageMkdirs(t, root, "usr/local/go", "tmp", "go", "root", "etc/ssl/certs")
		entries, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			switch e.Name() {
			case "test", "api", "doc", "misc": // not needed to build
				continue
			}
			if out, err := exec.Command("cp", "-a", filepath.Join(src, e.Name()), dst).CombinedOutput(); err != nil {
				t.Fatalf("copying GOROOT: %v\n%s", err, out)
			}
		}
		imageCopyFile(t, "/etc/ssl/certs/ca-certificates.crt", filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"))
		imageWriteFile(t, root, "etc/passwd", "root:x:0:0:root:/root:/sbin/nologin\n")
		imageWriteFile(t, root, "etc/group", "root:x:0:\n")
		if err := os.Chmod(filepath.Join(root, "tmp"), 0o1777); err != nil {
			t.Fatal(err)
		}
	}, "--env", "PATH=/usr/local/go/bin:/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"--env", "GOPATH=/go", "--env", "GOTOOLCHAIN=local", "--workingdir", "/go")
}

// runtimeImage stands in for gcr.io/distroless/static-debian12:nonroot: /etc/passwd and
// /etc/group with root, nobody and nonroot (65532), CA certificates, /tmp and the nonroot
// home, user 65532.
func (b *imageBuilder) runtimeImage(t *testing.T, name string) string {
	t.Helper()
	return b.fromScratch(t, name, func(root string) {
		imageMkdirs(t, root, "etc/ssl/certs", "tmp", "home/nonroot")
		imageCopyFile(t, "/etc/ssl/certs/ca-certificates.crt", filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"))
		imageWriteFile(t, root, "etc/passwd", "root:x:0:0:root:/root:/sbin/nologin\n"+
			"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"+
			"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")
		imageWriteFile(t, root, "etc/group", "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n")
		if err := os.Chmod(filepath.Join(root, "tmp"), 0o1777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(filepath.Join(root, "home/nonroot"), 65532, 65532); err != nil {
			t.Fatal(err)
		}
	}, "--user", imageUID, "--workingdir", "/home/nonroot",
		"--env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"--env", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt")
}

// build builds the repository's Dockerfile. Modules come from the host's module cache
// (mounted as a file GOPROXY) and, for any it lacks, from the host's GOPROXY; the
// Dockerfile's cache mounts keep modules and compiled packages for the next build.
func (b *imageBuilder) build(t *testing.T, image, goImage, runtimeImage string) {
	t.Helper()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"bud", "--isolation", "chroot", "--pull=never", "--quiet",
		"--build-arg", "GO_IMAGE=" + goImage, "--build-arg", "RUNTIME_IMAGE=" + runtimeImage,
		"--file", filepath.Join(repo, "Dockerfile"), "--tag", image}
	proxy := imageGoEnv(t, "GOPROXY")
	if proxy == "" {
		proxy = "https://proxy.golang.org,direct"
	}
	if modcache := imageGoEnv(t, "GOMODCACHE"); modcache != "" {
		if _, err := os.Stat(filepath.Join(modcache, "cache/download")); err == nil {
			args = append(args, "--volume", filepath.Join(modcache, "cache/download")+":/host-goproxy:ro")
			proxy = "file:///host-goproxy," + proxy
		}
	}
	args = append(args, "--build-arg", "GOPROXY="+proxy, repo)
	start := time.Now()
	cmd := b.cmd(args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("buildah %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("built the image in %v", time.Since(start).Round(100*time.Millisecond))
}

type imageConfig struct {
	User         string
	Env          []string
	Entrypoint   []string
	ExposedPorts map[string]struct{}
}

func (b *imageBuilder) imageConfig(t *testing.T, image string) imageConfig {
	t.Helper()
	var info struct {
		OCIv1 struct {
			Config imageConfig `json:"config"`
		}
	}
	if err := json.Unmarshal([]byte(b.run(t, "inspect", "--type", "image", image)), &info); err != nil {
		t.Fatal(err)
	}
	return info.OCIv1.Config
}

// readOnlyContainer makes a container of image whose root filesystem is read-only, like
// `docker run --read-only`: buildah has no such option, so its directory is bind-mounted
// read-only onto itself. The mount points buildah's chroot isolation needs are made first,
// and /run is a writable directory of its own, where buildah puts and removes
// /run/.containerenv.
func (b *imageBuilder) readOnlyContainer(t *testing.T, image, name string) string {
	t.Helper()
	ctr := b.run(t, "from", "--pull=never", "--name", name, image)
	root := b.run(t, "mount", ctr)
	imageMkdirs(t, root, "proc", "dev", "sys", "run", "etc")
	for _, f := range []string{"etc/hosts", "etc/hostname", "etc/resolv.conf"} {
		if _, err := os.Stat(filepath.Join(root, f)); os.IsNotExist(err) {
			imageWriteFile(t, root, f, "")
		}
	}
	run, err := os.MkdirTemp(b.dir, "container-run")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(run, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		src, dst string
		flags    uintptr
	}{
		{root, root, syscall.MS_BIND},
		{"", root, syscall.MS_BIND | syscall.MS_REMOUNT | syscall.MS_RDONLY},
		{run, filepath.Join(root, "run"), syscall.MS_BIND},
	} {
		if err := syscall.Mount(m.src, m.dst, "", m.flags, ""); err != nil {
			t.Fatalf("mount %s on %s: %v", m.src, m.dst, err)
		}
	}
	t.Cleanup(func() {
		_ = syscall.Unmount(filepath.Join(root, "run"), 0)
		_ = syscall.Unmount(root, 0)
	})
	if err := os.WriteFile(filepath.Join(root, "genui-write-test"), nil, 0o644); err == nil {
		t.Fatal("the container's root filesystem is writable")
	}
	return ctr
}

type imageContainer struct {
	base string
	cmd  *exec.Cmd
	pid  int // the server's process, as the host sees it
	logs *syncWriter
	done chan error
}

// start runs the image's entrypoint in ctr with env on a free loopback port (the
// container shares the host's network), and waits for /healthz and /readyz.
func (b *imageBuilder) start(t *testing.T, ctr string, entrypoint []string, env ...string) *imageContainer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	args := []string{"run", "--isolation", "chroot", "--env", "GENUI_ADDR=" + addr}
	for _, e := range env {
		args = append(args, "--env", e)
	}
	args = append(append(args, ctr, "--"), entrypoint...)
	c := &imageContainer{base: "http://" + addr, cmd: b.cmd(args...), logs: &syncWriter{w: &bytes.Buffer{}}, done: make(chan error, 1)}
	c.cmd.Stdout, c.cmd.Stderr = c.logs, c.logs
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case err := <-c.done:
			c.done <- err
		default:
			if c.pid != 0 {
				_ = syscall.Kill(c.pid, syscall.SIGKILL)
			}
			_ = c.cmd.Process.Kill()
			<-c.done
		}
		if t.Failed() {
			t.Logf("container output:\n%s", c.logs.String())
		}
	})

	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-c.done:
			c.done <- err
			t.Fatalf("buildah run exited: %v\n%s", err, c.logs.String())
		default:
		}
		if c.pid == 0 {
			c.pid = imageServerPID(c.cmd.Process.Pid, entrypoint[0])
		}
		if c.pid != 0 && imageHTTPStatus(c.base+"/healthz") == 200 && imageHTTPStatus(c.base+"/readyz") == 200 {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not up (pid %d)\n%s", c.pid, c.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkProcess checks the server runs as the image's non-root user on a read-only root.
func (c *imageContainer) checkProcess(t *testing.T) {
	t.Helper()
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(st), "\n") {
		f := strings.Fields(line)
		if len(f) == 5 && (f[0] == "Uid:" || f[0] == "Gid:") && (f[1] != imageUID || f[2] != imageUID || f[3] != imageUID || f[4] != imageUID) {
			t.Errorf("server process %s, want %s", line, imageUID)
		}
	}
	mounts, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", c.pid))
	if err != nil {
		t.Fatal(err)
	}
	rootReadOnly := false
	for _, line := range strings.Split(string(mounts), "\n") {
		// id parent major:minor root mountpoint options …; the last mount on / wins.
		if f := strings.Fields(line); len(f) > 5 && f[4] == "/" {
			rootReadOnly = slices.Contains(strings.Split(f[5], ","), "ro")
		}
	}
	if !rootReadOnly {
		t.Errorf("the server's root filesystem is not read-only:\n%s", mounts)
	}
}

// stop sends SIGTERM to the server and waits for it to exit 0.
func (c *imageContainer) stop(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(c.pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	c.wait(t)
}

// wait waits for the server to exit; buildah run exits with its status.
func (c *imageContainer) wait(t *testing.T) {
	t.Helper()
	select {
	case err := <-c.done:
		c.done <- err
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, c.logs.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("server did not exit after SIGTERM\n%s", c.logs.String())
	}
}

// imageServerPID finds the process below pid whose argv[0] is argv0, or returns 0.
func imageServerPID(pid int, argv0 string) int {
	entries, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	var candidates []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 {
			continue
		}
		parent[p], _ = strconv.Atoi(f[1])
		if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p)); err == nil {
			if first, _, _ := bytes.Cut(cmdline, []byte{0}); string(first) == argv0 {
				candidates = append(candidates, p)
			}
		}
	}
	for _, c := range candidates {
		for p, n := parent[c], 0; p > 1 && n < 64; p, n = parent[p], n+1 {
			if p == pid {
				return c
			}
		}
	}
	return 0
}

func imageHTTPStatus(url string) int {
	res, err := http.Get(url)
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

func imageGoEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

func imageMkdirs(t *testing.T, root string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func imageWriteFile(t *testing.T, root, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// imageCopyFile copies src to dst, if src exists.
func imageCopyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func imageSuffix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
