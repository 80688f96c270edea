package sync

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/quotesync/quotesync/remote/redact"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// deliveries checks what the outbox delivers, writing nothing: each
// write-back statement prepared and EXPLAINed (its tables and columns
// resolved), the notifiers' settings (a command that exists and may be
// run), and the deliveries not made yet with the last failure.
func (c *checks) deliveries(ctx context.Context, db *shopdb.DB, st *store.Store, n NotifyConfig) {
	c.queries(db.CheckWriteBack(ctx))
	n = n.withDefaults()
	var parts []string
	if n.Webhook.URL != "" {
		w := "webhook POST " + WebhookOrigin(n.Webhook.URL)
		if n.Webhook.Header != "" {
			w += " (secret header " + n.Webhook.Header + ")"
		}
		parts = append(parts, w)
	}
	if p := n.Command.Path; p != "" {
		path, err := exec.LookPath(p)
		if err == nil && !strings.HasPrefix(path, "/") {
			err = fmt.Errorf("not an absolute path")
		}
		if err == nil {
			_, err = os.Stat(path)
		}
		if err != nil {
			c.add(CheckFail, "notify.command", "%s: %v; give the absolute path of an executable file", p, err)
		} else {
			parts = append(parts, "command "+path)
		}
	}
	if len(parts) > 0 {
		c.add(CheckOK, "notify", "%s; events: %s", strings.Join(parts, "; "), strings.Join(n.Events, ", "))
	}
	ds, err := st.DeliveryStats(ctx)
	switch {
	case err != nil:
		c.add(CheckFail, "deliveries", "%v", err)
	case ds.Failing > 0:
		c.add(CheckWarn, "deliveries", "%s", DeliveryLine(c.secrets, ds))
	case ds.Pending > 0:
		c.add(CheckOK, "deliveries", "%s", DeliveryLine(c.secrets, ds))
	}
}

// DeliveryLine says in one line how the outbox stands: how many
// deliveries are not made yet, how many of them failed, and the last
// failure, its text bounded after the secrets of secrets are redacted.
func DeliveryLine(secrets *redact.Secrets, st store.DeliveryStats) string {
	s := fmt.Sprintf("%d deliveries not made yet", st.Pending)
	if st.Pending == 1 {
		s = "1 delivery not made yet"
	}
	if st.Failing == 0 {
		return s
	}
	l := st.Last
	what := l.Target + " " + l.Kind
	if l.RequestID != "" {
		what += " of request " + l.RequestID
	}
	if l.Job != "" {
		what += " (job " + l.Job + ")"
	}
	return fmt.Sprintf("%s, %d failing (tried again with backoff); the last failure: %s, attempt %d, at %s: %s",
		s, st.Failing, what, l.Attempts, st.FailedAt.Format("2006-01-02 15:04:05Z07:00"), boundText(secrets, l.LastError, 500))
}
