package shopdb_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// TestDetectCluster: the facts of a Galera node, a Group Replication
// member and servers on their own, as ClusterVars reads them on each.
func TestDetectCluster(t *testing.T) {
	tests := []struct {
		name string
		vars map[string]string
		want shopdb.Cluster
	}{
		{"MariaDBStandalone", map[string]string{"wsrep_on": "OFF", "wsrep_cluster_size": "0"}, shopdb.Cluster{}},
		{"MySQLStandalone", map[string]string{}, shopdb.Cluster{}},
		{"GaleraNode", map[string]string{"wsrep_on": "ON", "wsrep_cluster_size": "3"},
			shopdb.Cluster{Kind: shopdb.ClusterGalera, Nodes: 3, Evidence: "wsrep_on=ON, wsrep_cluster_size=3"}},
		{"GaleraSizeUnknown", map[string]string{"wsrep_on": "ON"},
			shopdb.Cluster{Kind: shopdb.ClusterGalera, Evidence: "wsrep_on=ON"}},
		{"GroupReplication", map[string]string{"plugin group_replication": "ACTIVE", "group_replication online members": "3", "group_replication_group_name": "aaaa-bbbb"},
			shopdb.Cluster{Kind: shopdb.ClusterGroupReplication, Nodes: 3, Evidence: "group_replication plugin active, 3 online members, group aaaa-bbbb"}},
		{"GroupReplicationNoPerfSchema", map[string]string{"plugin group_replication": "ACTIVE"},
			shopdb.Cluster{Kind: shopdb.ClusterGroupReplication, Evidence: "group_replication plugin active"}},
		{"GroupReplicationPluginOff", map[string]string{"plugin group_replication": "DISABLED"}, shopdb.Cluster{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, shopdb.DetectCluster(tt.vars)); diff != "" {
				t.Errorf("DetectCluster(%v) (-want +got):\n%s", tt.vars, diff)
			}
		})
	}
}

// TestClusterStandalone reads the real server's variables: the test
// server stands alone, and its wsrep_on is read (MariaDB has it, OFF).
func TestClusterStandalone(t *testing.T) {
	d := shopdbtest.NewDatabase(t)
	db := d.Open(t, d.Config())
	ctx := testContext(t)
	vars, err := db.ClusterVars(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var version string
	if err := d.SQL.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(version, "MariaDB") && vars["wsrep_on"] != "OFF" {
		t.Errorf("MariaDB %s: wsrep_on read as %q, want OFF (vars %v)", version, vars["wsrep_on"], vars)
	}
	c, err := db.Cluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c != (shopdb.Cluster{}) {
		t.Errorf("Cluster() on the standalone test server = %+v (vars %v), want none", c, vars)
	}
}
