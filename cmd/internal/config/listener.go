package config

// DefaultUsersFile is where `quotesync passwd` writes without --file: the
// users of the status page's login.
const DefaultUsersFile = "/etc/quotesync/users"
