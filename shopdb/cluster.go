package shopdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Kinds of Cluster.
const (
	ClusterGalera           = "galera"            // MariaDB Galera Cluster / Percona XtraDB Cluster
	ClusterGroupReplication = "group_replication" // MySQL Group Replication / InnoDB Cluster
)

// Cluster is what the server says about a replication that its user
// locks do not span: GET_LOCK is local to one server, so on a Galera or
// Group Replication cluster two instances connected to different nodes
// can both hold the single-instance lock.
type Cluster struct {
	Kind     string // ClusterGalera, ClusterGroupReplication, or "" for a server on its own
	Nodes    int    // the nodes or members the server counts; 0 when unknown
	Evidence string // the variables that tell, e.g. "wsrep_on=ON, wsrep_cluster_size=3"
}

// Names of the facts ClusterVars reads, as DetectCluster takes them.
const (
	varWsrepOn          = "wsrep_on"
	varWsrepClusterSize = "wsrep_cluster_size"
	varGRPlugin         = "plugin group_replication" // PLUGIN_STATUS, when the plugin is installed
	varGRMembers        = "group_replication online members"
	varGRGroupName      = "group_replication_group_name"
)

// DetectCluster tells a cluster node from the facts ClusterVars reads
// (variable name → value; missing means not there). It is a pure function
// so that the cases a test server cannot be put in are tested too.
func DetectCluster(vars map[string]string) Cluster {
	if strings.EqualFold(vars[varWsrepOn], "ON") || vars[varWsrepOn] == "1" {
		c := Cluster{Kind: ClusterGalera, Evidence: "wsrep_on=ON"}
		if n, err := strconv.Atoi(vars[varWsrepClusterSize]); err == nil && n > 0 {
			c.Nodes = n
			c.Evidence += ", wsrep_cluster_size=" + vars[varWsrepClusterSize]
		}
		return c
	}
	members, _ := strconv.Atoi(vars[varGRMembers])
	if strings.EqualFold(vars[varGRPlugin], "ACTIVE") || members > 0 {
		c := Cluster{Kind: ClusterGroupReplication, Nodes: members, Evidence: "group_replication plugin " + strings.ToLower(vars[varGRPlugin])}
		if members > 0 {
			c.Evidence += fmt.Sprintf(", %d online members", members)
		}
		if g := vars[varGRGroupName]; g != "" {
			c.Evidence += ", group " + g
		}
		return c
	}
	return Cluster{}
}

// ClusterVars reads what DetectCluster needs: the wsrep and
// group_replication variables, the plugin's status, and the online
// members (when the plugin runs and performance_schema may be read). Only
// statements any user may run on MariaDB and MySQL; facts the server does
// not have are left out.
func (db *DB) ClusterVars(ctx context.Context) (map[string]string, error) {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	vars := map[string]string{}
	read := func(q string) error {
		rows, err := db.x.QueryContext(ctx, q)
		if err != nil {
			return fmt.Errorf("read cluster variables: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				return fmt.Errorf("read cluster variables: %w", err)
			}
			vars[strings.ToLower(k)] = v
		}
		return rows.Err()
	}
	if err := read("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('wsrep_on', '" + varGRGroupName + "')"); err != nil {
		return nil, err
	}
	if err := read("SHOW GLOBAL STATUS WHERE Variable_name = 'wsrep_cluster_size'"); err != nil {
		return nil, err
	}
	var status string
	err := db.x.QueryRowContext(ctx, "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'group_replication'").Scan(&status)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return vars, nil
	case err != nil:
		return nil, fmt.Errorf("read cluster variables: %w", err)
	}
	vars[varGRPlugin] = status
	var members int
	// performance_schema may be closed to this user: the plugin's status
	// tells enough then.
	if db.x.QueryRowContext(ctx, "SELECT COUNT(*) FROM performance_schema.replication_group_members WHERE MEMBER_STATE = 'ONLINE'").Scan(&members) == nil {
		vars[varGRMembers] = strconv.Itoa(members)
	}
	return vars, nil
}

// Cluster reads and detects the server's cluster membership.
func (db *DB) Cluster(ctx context.Context) (Cluster, error) {
	vars, err := db.ClusterVars(ctx)
	if err != nil {
		return Cluster{}, err
	}
	return DetectCluster(vars), nil
}
