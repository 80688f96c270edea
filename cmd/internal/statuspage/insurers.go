package statuspage

// NameInsurers reports whether what shows requests names their insurer:
// when several insurers are configured, or when a request shown is of
// another insurer than the one configured (seen: the insurers of the
// requests shown). With none known to be configured, when the requests
// shown are of several insurers. A request written before insurers had
// names (insurer "") counts as the lone insurer's: its first start
// gives it to that insurer.
func NameInsurers(configured []string, seen ...string) bool {
	if len(configured) > 1 {
		return true
	}
	lone := ""
	if len(configured) == 1 {
		lone = configured[0]
	}
	for _, s := range seen {
		switch {
		case s == "" || s == lone:
		case lone == "" && len(configured) == 0:
			lone = s // the first insurer seen; another one names them
		default:
			return true
		}
	}
	return false
}

// CommandArg is how a command (`quotesync retry`, `history`) names the
// request id of insurer: the id, or with named "--insurer INSURER ID".
func CommandArg(insurer, id string, named bool) string {
	if named && insurer != "" {
		return "--insurer " + insurer + " " + id
	}
	return id
}
