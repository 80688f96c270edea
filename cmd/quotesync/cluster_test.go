package main

import (
	"strings"
	"testing"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/shopdb"
	qsync "github.com/quotesync/quotesync/sync"
)

// TestClusterVerdict: a clustered server warns unless shop.single_writer
// is set; a server on its own is fine either way.
func TestClusterVerdict(t *testing.T) {
	galera := shopdb.Cluster{Kind: shopdb.ClusterGalera, Nodes: 3, Evidence: "wsrep_on=ON, wsrep_cluster_size=3"}
	gr := shopdb.Cluster{Kind: shopdb.ClusterGroupReplication, Nodes: 3, Evidence: "group_replication plugin active"}
	for _, tt := range []struct {
		name         string
		c            shopdb.Cluster
		singleWriter bool
		want         string
		says         []string
	}{
		{"Standalone", shopdb.Cluster{}, false, qsync.CheckOK, []string{"stands alone"}},
		{"StandaloneSingleWriter", shopdb.Cluster{}, true, qsync.CheckOK, []string{"stands alone"}},
		{"Galera", galera, false, qsync.CheckWarn, []string{"Galera", "wsrep_on=ON", "local to one node", "shop.single_writer: true"}},
		{"GaleraSingleWriter", galera, true, qsync.CheckOK, []string{"Galera", "single_writer: true says"}},
		{"GroupReplication", gr, false, qsync.CheckWarn, []string{"Group Replication", "one writer"}},
		{"GroupReplicationSingleWriter", gr, true, qsync.CheckOK, []string{"Group Replication"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, detail := clusterVerdict(tt.c, tt.singleWriter)
			if status != tt.want {
				t.Errorf("status %s, want %s (%s)", status, tt.want, detail)
			}
			for _, s := range tt.says {
				if !strings.Contains(detail, s) {
					t.Errorf("detail %q does not say %q", detail, s)
				}
			}
		})
	}
}

// TestCheckClusterBinary: `quotesync check` on the plain test server has
// an ok cluster line (the negative case; a real cluster cannot be made
// here, so the positive cases are TestClusterVerdict and
// shopdb.TestDetectCluster).
func TestCheckClusterBinary(t *testing.T) {
	t.Parallel()
	for _, single := range []bool{false, true} {
		e := newCLIEnv(t, func(fc *config.File) { fc.Shop.SingleWriter = single })
		r := e.run("check", "--config", e.Conf)
		var line string
		for _, l := range strings.Split(r.Stdout, "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[1] == checkCluster {
				line = l
			}
		}
		if !strings.HasPrefix(line, "ok ") || !strings.Contains(line, "stands alone") {
			t.Errorf("single_writer %v: cluster line %q, want ok, stands alone:\n%s", single, line, r)
		}
	}
}
