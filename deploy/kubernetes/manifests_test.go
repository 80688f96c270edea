package kubernetes_test

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// The label that names a site, and what the base names things.
const (
	siteLabel  = "app.kubernetes.io/instance"
	nameLabel  = "app.kubernetes.io/name"
	configFile = "config.yaml"
)

// secretFiles are a site's secrets, written beside its kustomization by
// the operator and never committed: the test writes stand-ins.
var secretFiles = []string{"token", "db-password"}

// site is one rendered overlay: what `kubectl apply -k sites/NAME` applies,
// each object decoded strictly into its API type.
type site struct {
	name       string
	deployment *appsv1.Deployment
	configMap  *corev1.ConfigMap
	secret     *corev1.Secret
	policy     *networkingv1.NetworkPolicy
	budget     *policyv1.PodDisruptionBudget
}

// unmarshalStrict decodes YAML into v as the API server's strict field
// validation does: keys matched case-sensitively (encoding/json alone
// would take readOnlyRootFileSystem for readOnlyRootFilesystem), unknown
// and repeated fields refused. A misspelt key is an error here, not a
// field kubectl drops.
func unmarshalStrict(t *testing.T, what string, data []byte, v any) {
	t.Helper()
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, data)
	}
	strict, err := kjson.UnmarshalStrict(j, v, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err == nil && len(strict) > 0 {
		err = errors.Join(strict...)
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, data)
	}
}

// TestSourcesDecodeStrictly decodes every YAML file of the base and the
// sites, as written, into its type: each kustomization into kustomize's,
// each manifest into the Kubernetes type of its kind.
func TestSourcesDecodeStrictly(t *testing.T) {
	files, err := filepath.Glob("base/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("sites/*/kustomization.yaml")
	files = append(files, more...)
	if len(files) < 5 {
		t.Fatalf("found %d files: %v", len(files), files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(f) == "kustomization.yaml" {
			var k types.Kustomization
			unmarshalStrict(t, f, data, &k)
			continue
		}
		decodeObject(t, f, data)
	}
}

// decodeObject decodes one manifest strictly into the type of its kind.
func decodeObject(t *testing.T, what string, data []byte) any {
	t.Helper()
	var meta struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &meta); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var obj any
	switch meta.Kind {
	case "Deployment":
		obj = &appsv1.Deployment{}
	case "ConfigMap":
		obj = &corev1.ConfigMap{}
	case "Secret":
		obj = &corev1.Secret{}
	case "NetworkPolicy":
		obj = &networkingv1.NetworkPolicy{}
	case "PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	default:
		t.Fatalf("%s: kind %q: the test decodes no such kind", what, meta.Kind)
	}
	unmarshalStrict(t, what, data, obj)
	return obj
}

// renderSites renders every overlay under sites/ as kustomize (the one
// kubectl embeds) does, from an in-memory copy of this directory with
// stand-ins for the secrets.
func renderSites(t *testing.T) []*site {
	t.Helper()
	mem := filesys.MakeFsInMemory()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return mem.WriteFile(path.Join("/", filepath.ToSlash(p)), data)
	})
	if err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob("sites/*/kustomization.yaml")
	if len(dirs) == 0 {
		t.Fatal("no site under sites/")
	}
	var out []*site
	for _, k := range dirs {
		dir := path.Join("/", filepath.ToSlash(filepath.Dir(k)))
		for _, f := range secretFiles {
			if err := mem.WriteFile(path.Join(dir, f), []byte("stand-in-"+f)); err != nil {
				t.Fatal(err)
			}
		}
		m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem, dir)
		if err != nil {
			t.Fatalf("kustomize build %s: %v", dir, err)
		}
		s := &site{name: path.Base(dir)}
		for _, r := range m.Resources() {
			data, err := r.AsYAML()
			if err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("%s: %s %s", dir, r.GetKind(), r.GetName())
			switch o := decodeObject(t, what, data).(type) {
			case *appsv1.Deployment:
				setOnce(t, what, &s.deployment, o)
			case *corev1.ConfigMap:
				setOnce(t, what, &s.configMap, o)
			case *corev1.Secret:
				setOnce(t, what, &s.secret, o)
			case *networkingv1.NetworkPolicy:
				setOnce(t, what, &s.policy, o)
			case *policyv1.PodDisruptionBudget:
				setOnce(t, what, &s.budget, o)
			}
		}
		if s.deployment == nil || s.configMap == nil || s.secret == nil || s.policy == nil || s.budget == nil {
			t.Fatalf("%s renders without one of Deployment, ConfigMap, Secret, NetworkPolicy, PodDisruptionBudget", dir)
		}
		out = append(out, s)
	}
	return out
}

// setOnce keeps the one object of a kind a site has.
func setOnce[T any](t *testing.T, what string, slot **T, v *T) {
	t.Helper()
	if *slot != nil {
		t.Fatalf("%s: a second object of its kind", what)
	}
	*slot = v
}

// TestSites renders each site and checks that its pieces line up: names
// and labels, the selectors, the site's name on its way to --site, the
// config and secrets mounted where the arguments and the config look, the
// ports of the listener, the probes and the scrape, the NetworkPolicy's
// holes against the config's addresses, and the image's user.
func TestSites(t *testing.T) {
	img := readDockerfile(t, "../../Dockerfile")
	for _, s := range renderSites(t) {
		t.Run(s.name, func(t *testing.T) { checkSite(t, s, img) })
	}
}

func checkSite(t *testing.T, s *site, img dockerImage) {
	d := s.deployment
	suffix := "-" + s.name
	for _, o := range []struct{ kind, name, ns string }{
		{"Deployment", d.Name, d.Namespace},
		{"NetworkPolicy", s.policy.Name, s.policy.Namespace},
		{"PodDisruptionBudget", s.budget.Name, s.budget.Namespace},
	} {
		if !strings.HasSuffix(o.name, suffix) || o.ns == "" {
			t.Errorf("%s %q in namespace %q: want a name ending %s, in a namespace", o.kind, o.name, o.ns, suffix)
		}
	}
	if s.configMap.Namespace != d.Namespace || s.secret.Namespace != d.Namespace || s.policy.Namespace != d.Namespace {
		t.Errorf("the site's objects are in several namespaces")
	}

	// Labels and selectors: every selector is the Deployment's, and the
	// pods carry it, with the site's name.
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas %v, want 2 (one works, one stands by)", d.Spec.Replicas)
	}
	sel := d.Spec.Selector.MatchLabels
	if sel[siteLabel] != s.name || sel[nameLabel] != "quotesync" {
		t.Errorf("Deployment selector %v: want %s=%s and %s=quotesync", sel, siteLabel, s.name, nameLabel)
	}
	pod := d.Spec.Template
	for k, v := range sel {
		if pod.Labels[k] != v {
			t.Errorf("the pods lack the selector's %s=%s: %v", k, v, pod.Labels)
		}
	}
	for _, other := range []struct {
		what string
		got  map[string]string
	}{
		{"PodDisruptionBudget selector", s.budget.Spec.Selector.MatchLabels},
		{"NetworkPolicy podSelector", s.policy.Spec.PodSelector.MatchLabels},
		{"topologySpreadConstraints labelSelector", spreadLabels(pod.Spec)},
	} {
		if !mapsEqual(other.got, sel) {
			t.Errorf("%s %v, want the Deployment's %v", other.what, other.got, sel)
		}
	}
	if s.budget.Spec.MinAvailable == nil || s.budget.Spec.MinAvailable.IntValue() != 1 {
		t.Errorf("PodDisruptionBudget minAvailable %v, want 1", s.budget.Spec.MinAvailable)
	}

	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}

	// The image's entry point runs; the arguments name the file and the
	// site, the site from the label.
	if len(c.Command) != 0 {
		t.Errorf("command %v: want the image's entry point (%v)", c.Command, img.entrypoint)
	}
	if !strings.HasSuffix(c.Image, ":1.0.0") || strings.HasPrefix(c.Image, "quotesync") {
		t.Errorf("image %q: want the overlay's registry and tag", c.Image)
	}
	configArg := argAfter(c.Args, "--config")
	if len(c.Args) == 0 || c.Args[0] != "run" || configArg == "" || argAfter(c.Args, "--site") != "$(QUOTESYNC_SITE)" {
		t.Errorf("args %v: want run --config FILE --site $(QUOTESYNC_SITE)", c.Args)
	}
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "$("); ok {
			if _, set := env[strings.TrimSuffix(v, ")")]; !set {
				t.Errorf("argument %s names no variable of env", a)
			}
		}
	}
	if f := env["QUOTESYNC_SITE"].ValueFrom; f == nil || f.FieldRef == nil || f.FieldRef.FieldPath != "metadata.labels['"+siteLabel+"']" {
		t.Errorf("QUOTESYNC_SITE %+v: want it from the pod's %s label", env["QUOTESYNC_SITE"], siteLabel)
	}

	// Mounts: the ConfigMap where --config looks, the Secret where
	// CREDENTIALS_DIRECTORY points, the socket's directory writable.
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m
	}
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		vols[v.Name] = v
		if _, ok := mounts[v.Name]; !ok {
			t.Errorf("volume %s is mounted nowhere", v.Name)
		}
	}
	cm := vols["config"].ConfigMap
	if cm == nil || cm.Name != s.configMap.Name {
		t.Errorf("volume config %+v: want the ConfigMap %s", vols["config"].VolumeSource, s.configMap.Name)
	}
	if got, want := path.Join(mounts["config"].MountPath, configFile), configArg; got != want {
		t.Errorf("the ConfigMap's %s is mounted as %s; --config reads %s", configFile, got, want)
	}
	sec := vols["credentials"].Secret
	if sec == nil || sec.SecretName != s.secret.Name {
		t.Errorf("volume credentials %+v: want the Secret %s", vols["credentials"].VolumeSource, s.secret.Name)
	} else if sec.DefaultMode == nil || *sec.DefaultMode&0o040 == 0 || *sec.DefaultMode&0o007 != 0 {
		t.Errorf("the Secret's files mode %v: want the group's read (fsGroup) and nothing for others", sec.DefaultMode)
	}
	if got, want := env["CREDENTIALS_DIRECTORY"].Value, mounts["credentials"].MountPath; got != want || got == "" {
		t.Errorf("CREDENTIALS_DIRECTORY %q, want the Secret's mount %q", got, want)
	}
	// The runtime's soft memory limit, the systemd unit's own (the daemon
	// sets none of its own), and under the container's memory limit.
	unit, err := os.ReadFile(filepath.Join("..", "..", "systemd", "quotesync.service"))
	if err != nil {
		t.Fatal(err)
	}
	if got := env["GOMEMLIMIT"].Value; got == "" || !strings.Contains(string(unit), "Environment=GOMEMLIMIT="+got+"\n") {
		t.Errorf("GOMEMLIMIT %q: want the systemd unit's own value", got)
	}
	for _, m := range []string{"config", "credentials"} {
		if !mounts[m].ReadOnly {
			t.Errorf("mount %s is writable", m)
		}
	}
	for _, k := range secretFiles {
		if _, ok := s.secret.Data[k]; !ok {
			t.Errorf("the Secret has no %s", k)
		}
	}

	// The site's file: its secrets under CREDENTIALS_DIRECTORY, its
	// listener on the container's port, its socket in the emptyDir.
	conf := siteConfig(t, s)
	if got := dig(conf, "remote", "token", "file"); got != "${CREDENTIALS_DIRECTORY}/token" {
		t.Errorf("remote.token.file %q, want ${CREDENTIALS_DIRECTORY}/token", got)
	}
	if got := dig(conf, "shop", "password_file"); got != "${CREDENTIALS_DIRECTORY}/db-password" {
		t.Errorf("shop.password_file %q, want ${CREDENTIALS_DIRECTORY}/db-password", got)
	}
	if got := dig(conf, "control", "socket"); path.Dir(got) != mounts["run"].MountPath || vols["run"].EmptyDir == nil {
		t.Errorf("control.socket %q: want it in the emptyDir mounted at %q", got, mounts["run"].MountPath)
	}
	_, listenPort, err := net.SplitHostPort(dig(conf, "metrics", "listen"))
	if err != nil {
		t.Fatalf("metrics.listen: %v", err)
	}
	var metricsPort int32
	for _, p := range c.Ports {
		if p.Name == "metrics" {
			metricsPort = p.ContainerPort
		}
	}
	if strconv.Itoa(int(metricsPort)) != listenPort {
		t.Errorf("container port metrics %d, metrics.listen's %s", metricsPort, listenPort)
	}
	if got := pod.Annotations["prometheus.io/port"]; got != listenPort || pod.Annotations["prometheus.io/scrape"] != "true" {
		t.Errorf("scrape annotations %v: want prometheus.io/scrape true on port %s", pod.Annotations, listenPort)
	}

	// Probes: liveness is the scheduler's progress (a standby passes);
	// readiness the site's health.
	for _, p := range []struct {
		what  string
		probe *corev1.Probe
		path  string
	}{
		{"startupProbe", c.StartupProbe, "/livez"},
		{"livenessProbe", c.LivenessProbe, "/livez"},
		{"readinessProbe", c.ReadinessProbe, "/healthz"},
	} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.String() != "metrics" {
			t.Errorf("%s %+v: want GET %s on the metrics port", p.what, p.probe, p.path)
		}
	}
	if l := c.LivenessProbe; l != nil && l.PeriodSeconds*l.FailureThreshold < 300 {
		t.Errorf("liveness gives up after %ds: want at least the systemd unit's 5 min watchdog", l.PeriodSeconds*l.FailureThreshold)
	}

	// The sandbox: the image's non-root user, nothing to escalate.
	psc, csc := pod.Spec.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != img.uid ||
		psc.FSGroup == nil || *psc.FSGroup != img.gid {
		t.Errorf("pod securityContext %+v: want non-root, the image's user %d and group %d", psc, img.uid, img.gid)
	}
	if csc == nil || csc.ReadOnlyRootFilesystem == nil || !*csc.ReadOnlyRootFilesystem || csc.AllowPrivilegeEscalation == nil ||
		*csc.AllowPrivilegeEscalation || csc.Capabilities == nil || !slices.Equal(csc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container securityContext %+v: want a read-only root, no escalation, every capability dropped", csc)
	}
	if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		t.Error("the pods get a service account token they never use")
	}
	req, lim := c.Resources.Requests, c.Resources.Limits
	if req.Memory().IsZero() || req.Cpu().IsZero() || lim.Memory().Cmp(*req.Memory()) < 0 {
		t.Errorf("resources %+v: want cpu and memory requests, and a memory limit above the request", c.Resources)
	}

	checkPolicy(t, s.policy, conf, listenPort)
}

// checkPolicy: in, only the monitoring namespace to the metrics port;
// out, DNS, the database server of shop.addr and HTTPS for the insurer.
func checkPolicy(t *testing.T, np *networkingv1.NetworkPolicy, conf map[string]any, listenPort string) {
	t.Helper()
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{"Ingress", "Egress"}) {
		t.Errorf("policyTypes %v: want both, so that what is not allowed is denied", np.Spec.PolicyTypes)
	}
	if len(np.Spec.Ingress) != 1 {
		t.Fatalf("%d ingress rules, want 1 (the scrape)", len(np.Spec.Ingress))
	}
	in := np.Spec.Ingress[0]
	if len(in.Ports) != 1 || in.Ports[0].Port == nil || in.Ports[0].Port.String() != "metrics" || len(in.From) != 1 ||
		in.From[0].NamespaceSelector == nil || in.From[0].PodSelector != nil || in.From[0].IPBlock != nil {
		t.Errorf("ingress %+v: want the metrics port from one namespace", in)
	}
	allows := func(ip net.IP, port int, proto string) bool {
		for _, r := range np.Spec.Egress {
			portOK := false
			for _, p := range r.Ports {
				if p.Port != nil && p.Port.IntValue() == port && (p.Protocol == nil || string(*p.Protocol) == proto) {
					portOK = true
				}
			}
			for _, to := range r.To {
				if !portOK || to.IPBlock == nil {
					continue
				}
				_, cidr, err := net.ParseCIDR(to.IPBlock.CIDR)
				if err == nil && (ip == nil || cidr.Contains(ip)) {
					return true
				}
			}
		}
		return false
	}
	dns := false
	for _, r := range np.Spec.Egress {
		for _, p := range r.Ports {
			if p.Port != nil && p.Port.IntValue() == 53 && len(r.To) == 1 && r.To[0].NamespaceSelector != nil {
				dns = true
			}
		}
	}
	if !dns {
		t.Error("no egress to DNS (port 53 in one namespace)")
	}
	host, port, err := net.SplitHostPort(dig(conf, "shop", "addr"))
	if err != nil {
		t.Fatalf("shop.addr: %v", err)
	}
	n, _ := strconv.Atoi(port)
	if ip := net.ParseIP(host); ip == nil || !allows(ip, n, "TCP") {
		t.Errorf("shop.addr %s:%s: no egress rule lets the site reach it (write the server's address in both)", host, port)
	}
	u, err := url.Parse(dig(conf, "remote", "base_url"))
	if err != nil || u.Scheme != "https" {
		t.Fatalf("remote.base_url %q: want https", dig(conf, "remote", "base_url"))
	}
	if !allows(nil, 443, "TCP") {
		t.Error("no egress rule to an address on port 443: the insurer's service is out of reach")
	}
	if len(np.Spec.Egress) != 3 {
		t.Errorf("%d egress rules, want 3: DNS, the database, the insurer", len(np.Spec.Egress))
	}
}

// siteConfig decodes the ConfigMap's quotesync file.
func siteConfig(t *testing.T, s *site) map[string]any {
	t.Helper()
	text, ok := s.configMap.Data[configFile]
	if !ok {
		t.Fatalf("the ConfigMap has no %s: %v", configFile, s.configMap.Data)
	}
	var conf map[string]any
	if err := yaml.Unmarshal([]byte(text), &conf); err != nil {
		t.Fatalf("%s: %v", configFile, err)
	}
	return conf
}

// dig returns the string at a path of keys in a decoded YAML document.
func dig(doc map[string]any, keys ...string) string {
	var cur any = doc
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[k]
	}
	s, _ := cur.(string)
	return s
}

// argAfter returns the argument after flag ("" when none).
func argAfter(args []string, flag string) string {
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		return ""
	}
	return args[i+1]
}

// spreadLabels is the label selector of the pods' one spread constraint.
func spreadLabels(spec corev1.PodSpec) map[string]string {
	if len(spec.TopologySpreadConstraints) != 1 || spec.TopologySpreadConstraints[0].LabelSelector == nil {
		return nil
	}
	return spec.TopologySpreadConstraints[0].LabelSelector.MatchLabels
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
