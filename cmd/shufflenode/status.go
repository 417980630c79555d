package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

func cmdStatus(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("status", stderr)
	addr := fs.String("node", "127.0.0.1:7947", "API address of a running node")
	shuffle := fs.String("shuffle", "", "also print this shuffle's state on that node")
	var auth clientAuthFlags
	auth.register(fs)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := auth.dial(*addr)
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode status: %v\n", err)
		return 1
	}
	defer c.Close()
	out := map[string]any{"node": *addr}
	if out["members"], err = c.Members(ctx); err != nil {
		fmt.Fprintf(stderr, "shufflenode status: %s: %v\n", *addr, err)
		return 1
	}
	if *shuffle != "" {
		if out["shuffle"], err = c.Status(ctx, *shuffle); err != nil {
			fmt.Fprintf(stderr, "shufflenode status: %v\n", err)
			return 1
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
	return 0
}
