package dhttest

import "log/slog"

// discardLogger drops every record (memberlist is chatty at debug level).
func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
