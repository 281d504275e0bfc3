package follow

// Owns reports whether key is owned by the follower: a followed key
// (Config.Keys) or the position key (Config.PositionKey). Clients may not
// write these keys (`serve --follow` installs Owns as the server's write
// guard, server.SetWriteGuard): a client write would make the key diverge
// from the stream, and a client CF.DEL or DEL could cause false
// negatives. It is safe for concurrent use and does not allocate.
func (f *Follower) Owns(key []byte) bool {
	return f.followed(key) || (f.cfg.PositionKey != "" && string(key) == f.cfg.PositionKey)
}
