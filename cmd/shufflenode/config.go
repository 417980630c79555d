package main

// Layered configuration of `shufflenode serve`.
//
// Every serve flag can also come from a JSON config file and from an
// environment variable. Precedence, lowest first:
//
//	flag defaults < config file < environment < flags on the command line
//
// Names are derived from the flag name, so the three stay in step:
//
//	flag --data-dir   config key "data_dir"   environment SHUFFLENODE_DATA_DIR
//
// The file is --config FILE, else $SHUFFLENODE_CONFIG. It holds one JSON
// object; a value is a string (parsed exactly as the flag would parse it),
// or for list flags (join, listen) an array of strings, or for sizes
// (memory_limit) a number of bytes. Unknown or repeated keys and bad values
// are errors naming the key and the file. An environment variable that is
// set but empty counts as unset.
//
// JSON rather than YAML or TOML: no parser for those is required by go.mod
// (go.yaml.in/yaml/v3 is only in go.sum, as a test dependency of testify),
// and the house rules forbid adding modules. JSON is a subset of YAML 1.2,
// so these files stay valid if a YAML decoder replaces readConfigFile.

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// envPrefix starts the environment variable of every serve flag.
const envPrefix = "SHUFFLENODE_"

// configFlag is the flag naming the config file; it has no config key.
const configFlag = "config"

// maxConfigBytes bounds the config file read.
const maxConfigBytes = 1 << 20

// errConfig is wrapped by every error in a config file or the environment.
var errConfig = errors.New("invalid configuration")

// listFlags are the flags whose config value may be a JSON array of strings.
var listFlags = map[string]bool{"join": true, "listen": true}

// configKey is the config-file key of a flag: "data-dir" -> "data_dir".
func configKey(flagName string) string { return strings.ReplaceAll(flagName, "-", "_") }

// envName is the environment variable of a flag:
// "data-dir" -> "SHUFFLENODE_DATA_DIR".
func envName(flagName string) string { return envPrefix + strings.ToUpper(configKey(flagName)) }

// lookupFunc reads one environment variable (os.LookupEnv in the binary).
type lookupFunc func(string) (string, bool)

// parseLayered parses args into fs, which must have a "config" flag, with
// the precedence defaults < config file < environment < command line. It
// returns flag.ErrHelp for -h, a flag error (already printed to fs's output)
// for bad flags, or an error wrapping errConfig.
func parseLayered(fs *flag.FlagSet, args []string, env lookupFunc) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	path := fs.Lookup(configFlag).Value.String()
	if path == "" {
		path = lookupSet(env, envName(configFlag))
	}
	if path != "" {
		if err := applyConfigFile(fs, path); err != nil {
			return err
		}
	}
	if err := applyEnv(fs, env); err != nil {
		return err
	}
	return fs.Parse(args) // the command line wins over file and environment
}

// lookupSet returns the variable's value, "" when unset or empty.
func lookupSet(env lookupFunc, name string) string {
	v, _ := env(name)
	return v
}

// applyEnv sets every flag whose environment variable is set and not empty.
func applyEnv(fs *flag.FlagSet, env lookupFunc) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		v := lookupSet(env, envName(f.Name))
		if err != nil || f.Name == configFlag || v == "" {
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			err = fmt.Errorf("%w: environment %s=%q: %v", errConfig, envName(f.Name), v, e)
		}
	})
	return err
}

// configEntry is one key and its raw JSON value, in file order.
type configEntry struct {
	key string
	raw json.RawMessage
}

// applyConfigFile sets the flags named by the keys of the JSON file at path.
func applyConfigFile(fs *flag.FlagSet, path string) error {
	entries, err := readConfigFile(path)
	if err != nil {
		return err
	}
	byKey := flagsByKey(fs)
	for _, e := range entries {
		f, ok := byKey[e.key]
		if !ok {
			return fmt.Errorf("%w: config %s: unknown key %q (known: %s)", errConfig, path, e.key, knownKeys(byKey))
		}
		if err := setFromJSON(fs, f, e.raw); err != nil {
			return fmt.Errorf("%w: config %s: key %q: %v", errConfig, path, e.key, err)
		}
	}
	return nil
}

// flagsByKey maps config keys to flags (every flag but "config").
func flagsByKey(fs *flag.FlagSet) map[string]*flag.Flag {
	m := map[string]*flag.Flag{}
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name != configFlag {
			m[configKey(f.Name)] = f
		}
	})
	return m
}

func knownKeys(byKey map[string]*flag.Flag) string {
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}

// readConfigFile reads one JSON object and returns its entries in order. It
// refuses files over maxConfigBytes, repeated keys and trailing data.
func readConfigFile(path string) ([]configEntry, error) {
	b, err := readLimited(path)
	if err != nil {
		return nil, fmt.Errorf("%w: config %s: %v", errConfig, path, err)
	}
	entries, err := decodeConfig(b)
	if err != nil {
		return nil, fmt.Errorf("%w: config %s: %v", errConfig, path, err)
	}
	return entries, nil
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err == nil && len(b) > maxConfigBytes {
		err = fmt.Errorf("larger than %d bytes", maxConfigBytes)
	}
	return b, err
}

// decodeConfig parses one JSON object into its entries.
func decodeConfig(b []byte) ([]configEntry, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("want one JSON object {\"key\": value, ...}")
	}
	var out []configEntry
	seen := map[string]bool{}
	for dec.More() {
		e, err := nextEntry(dec)
		if err != nil {
			return nil, err
		}
		if seen[e.key] {
			return nil, fmt.Errorf("key %q given twice", e.key)
		}
		seen[e.key] = true
		out = append(out, e)
	}
	return out, endOfObject(dec)
}

func nextEntry(dec *json.Decoder) (configEntry, error) {
	t, err := dec.Token()
	if err != nil {
		return configEntry{}, fmt.Errorf("bad JSON: %v", err)
	}
	e := configEntry{key: t.(string)} // inside an object, a token here is a key
	if err := dec.Decode(&e.raw); err != nil {
		return configEntry{}, fmt.Errorf("key %q: bad JSON: %v", e.key, err)
	}
	return e, nil
}

// endOfObject consumes the closing brace and checks nothing follows it.
func endOfObject(dec *json.Decoder) error {
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("bad JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("data after the JSON object")
	}
	return nil
}

// setFromJSON sets flag f from a JSON value: a string for any flag, an
// array of strings for a list flag, a number for a size.
func setFromJSON(fs *flag.FlagSet, f *flag.Flag, raw json.RawMessage) error {
	s, err := jsonFlagValue(f, raw)
	if err != nil {
		return err
	}
	return fs.Set(f.Name, s)
}

func jsonFlagValue(f *flag.Flag, raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	var s string
	switch {
	case len(raw) > 0 && raw[0] == '"':
		err := json.Unmarshal(raw, &s)
		return s, err
	case len(raw) > 0 && raw[0] == '[' && listFlags[f.Name]:
		return jsonList(raw)
	case len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') && isSize(f):
		return string(raw), nil // parseBytes reads JSON numbers, and refuses negatives
	}
	return "", fmt.Errorf("want %s, got %s", wantedJSON(f), raw)
}

// jsonList joins a JSON array of strings with commas, as the flag takes it.
func jsonList(raw json.RawMessage) (string, error) {
	var l []string
	if err := json.Unmarshal(raw, &l); err != nil {
		return "", fmt.Errorf("want an array of strings: %v", err)
	}
	for _, x := range l {
		if strings.Contains(x, ",") {
			return "", fmt.Errorf("list element %q contains a comma", x)
		}
	}
	return strings.Join(l, ","), nil
}

func isSize(f *flag.Flag) bool {
	_, ok := f.Value.(*byteSize)
	return ok
}

func wantedJSON(f *flag.Flag) string {
	switch {
	case listFlags[f.Name]:
		return "a string or an array of strings"
	case isSize(f):
		return `a size string ("1GiB") or a number of bytes`
	}
	return "a string"
}
