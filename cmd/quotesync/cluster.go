package main

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/shopdb"
	qsync "github.com/quotesync/quotesync/sync"
)

// HA on a clustered server: GET_LOCK, the single-instance lock, is local
// to one MySQL/MariaDB server. On a Galera or Group Replication cluster
// two instances connected to different nodes can both hold it, and both
// work. check and the start say so unless shop.single_writer tells that
// every instance reaches one writer.

// Log message and fields of the start's cluster warning.
const (
	msgClusterNode = "the shop database is a cluster node; the single-instance lock covers this node only"
	fieldCluster   = "cluster"
	fieldNodes     = "nodes"
	fieldEvidence  = "evidence"
	checkCluster   = "cluster" // the check's name
	clusterTimeout = 10 * time.Second
)

// clusterNames are the kinds in people's words.
var clusterNames = map[string]string{
	shopdb.ClusterGalera:           "a Galera cluster node",
	shopdb.ClusterGroupReplication: "a Group Replication member",
}

// clusterVerdict judges the server for check and the start: ok on a server
// on its own or with shop.single_writer, else a warning and what to do.
func clusterVerdict(c shopdb.Cluster, singleWriter bool) (status, detail string) {
	if c.Kind == "" {
		return qsync.CheckOK, "the server stands alone (not Galera, not Group Replication): the single-instance lock (GET_LOCK) covers every instance that uses it"
	}
	what := fmt.Sprintf("%s (%s)", clusterNames[c.Kind], c.Evidence)
	if singleWriter {
		return qsync.CheckOK, what + "; shop.single_writer: true says every instance reaches one writer, so the single-instance lock holds"
	}
	return qsync.CheckWarn, what + ": GET_LOCK, the single-instance lock, is local to one node, so two instances connected to different nodes could both work " +
		"(and accept or submit twice). Point every instance at one writer (the same node, or a proxy that sends every write to one node), then set shop.single_writer: true; " +
		"a single instance needs only the key"
}

// checkClusterLine adds check's cluster line, when the database answered.
func checkClusterLine(ctx context.Context, cl *checklist, set *config.Settings) {
	for _, it := range cl.items {
		if it.Name == "database" && it.Status != qsync.CheckOK {
			return
		}
	}
	ctx, cancel := context.WithTimeout(ctx, clusterTimeout)
	defer cancel()
	db, err := shopdb.Open(ctx, set.Daemon.Shop)
	if err != nil {
		cl.add(qsync.CheckFail, checkCluster, "%v", err)
		return
	}
	defer db.Close()
	c, err := db.Cluster(ctx)
	if err != nil {
		cl.add(qsync.CheckFail, checkCluster, "%v", err)
		return
	}
	status, detail := clusterVerdict(c, set.SingleWriter)
	cl.add(status, checkCluster, "%s", detail)
}

// warnCluster logs, at the start, that the shop database is a cluster
// node the configuration has not said is used through one writer. A
// failure to read the variables is no reason to stop: debug only.
func (d *daemon) warnCluster(ctx context.Context, db *shopdb.DB, singleWriter bool) {
	ctx, cancel := context.WithTimeout(ctx, clusterTimeout)
	defer cancel()
	c, err := db.Cluster(ctx)
	if err != nil {
		d.log.Debug(msgClusterNode, zap.Error(err))
		return
	}
	if status, detail := clusterVerdict(c, singleWriter); status == qsync.CheckWarn {
		d.log.Warn(msgClusterNode, zap.String(fieldCluster, c.Kind), zap.Int(fieldNodes, c.Nodes),
			zap.String(fieldEvidence, c.Evidence), zap.String(fieldDetail, detail))
	}
}
