package main

// Layered configuration of `shufflenode serve`.
//
// Every serve flag can also come from a config file and from an environment
// variable. Precedence, lowest first:
//
//	flag defaults < config file < environment < flags on the command line
//
// Names are derived from the flag name, so the three stay in step:
//
//	flag --data-dir   config key "data_dir"   environment SHUFFLENODE_DATA_DIR
//
// The file is --config FILE, else $SHUFFLENODE_CONFIG. It is YAML, whatever
// its name: one mapping of keys to values (or nothing, or only comments).
// JSON is YAML too, so a JSON object is read the same way (yamlFromJSON
// first rewrites the two JSON escapes the YAML decoder lacks). A value is a
// string (parsed exactly as the flag would parse it), or for list flags
// (join, listen, advertise_p2p, output_root, input_root) a list of strings, or for sizes (memory_limit) a whole
// number of bytes, or for whole-number flags (max_shuffles) a number, or
// for switches (pprof, insecure_api) true or false. Nested mappings, other YAML types (numbers for strings,
// booleans, null), unknown or repeated keys, a second document and bad
// values are errors naming the key, the file and the line: YAML's implicit
// typing would otherwise turn "name: 01" or "name: true" into something the
// user did not write. Anchors and aliases work for values; merge keys ("<<")
// are unknown keys. An environment variable that is set but empty counts
// as unset.

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// envPrefix starts the environment variable of every serve flag.
const envPrefix = "SHUFFLENODE_"

// configFlag is the flag naming the config file; it has no config key.
const configFlag = "config"

// maxConfigBytes bounds the config file read.
const maxConfigBytes = 1 << 20

// errConfig is wrapped by every error in a config file or the environment.
var errConfig = errors.New("invalid configuration")

// listFlags are the flags whose config value may be a list of strings.
var listFlags = map[string]bool{"join": true, "listen": true, "advertise-p2p": true, "output-root": true, "input-root": true}

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

// configEntry is one key of a config file, its line and its value.
type configEntry struct {
	key   string
	line  int
	value *yaml.Node // an alias is resolved
}

// applyConfigFile sets the flags named by the keys of the config file at path.
func applyConfigFile(fs *flag.FlagSet, path string) error {
	entries, err := readConfigFile(path)
	if err != nil {
		return err
	}
	byKey := flagsByKey(fs)
	for _, e := range entries {
		if err := applyEntry(fs, byKey, e); err != nil {
			return fmt.Errorf("%w: config %s: line %d: %v", errConfig, path, e.line, err)
		}
	}
	return nil
}

// applyEntry sets the flag of one config key.
func applyEntry(fs *flag.FlagSet, byKey map[string]*flag.Flag, e configEntry) error {
	f, ok := byKey[e.key]
	if !ok {
		return fmt.Errorf("unknown key %q (known: %s)", e.key, knownKeys(byKey))
	}
	s, err := flagValue(f, e.value)
	if err == nil {
		err = fs.Set(f.Name, s)
	}
	if err != nil {
		return fmt.Errorf("key %q: %v", e.key, err)
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

// readConfigFile reads a config file and returns its entries in file order.
// It refuses files over maxConfigBytes.
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

// decodeConfig parses a YAML (or JSON) document holding one mapping and
// returns its entries in order; an empty document has none. It refuses
// non-string keys and repeated keys, not unknown ones: the caller knows the
// flags.
func decodeConfig(b []byte) ([]configEntry, error) {
	root, err := decodeDocument(b)
	if err != nil || root == nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a mapping of keys to values, got %s", root.Line, describe(root))
	}
	return mappingEntries(root)
}

// decodeDocument returns the root node of the one YAML document in b, nil
// if b holds no document or an empty one.
func decodeDocument(b []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(yamlFromJSON(b)))
	var doc, next yaml.Node
	if err := dec.Decode(&doc); err == io.EOF {
		return nil, nil
	} else if err != nil {
		return nil, yamlError(err)
	}
	if err := dec.Decode(&next); err != io.EOF {
		if err != nil {
			return nil, yamlError(err)
		}
		return nil, fmt.Errorf("line %d: a second YAML document (want one)", next.Line)
	}
	if len(doc.Content) != 1 || isNull(resolveAlias(doc.Content[0])) {
		return nil, nil
	}
	return resolveAlias(doc.Content[0]), nil
}

// yamlFromJSON rewrites the escapes of a JSON text that YAML lacks, so the
// YAML decoder reads any JSON file as encoding/json does: "\/" becomes "/"
// and a surrogate pair "\uD83D\uDE00" becomes "\U0001F600". Anything else,
// lines included, is kept; b is returned as is unless it is valid JSON
// (where every backslash starts an escape inside a string).
func yamlFromJSON(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\`)) || !json.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			out = append(out, b[i])
			continue
		}
		n, yamlEscape := fromJSONEscape(b[i:])
		out = append(out, yamlEscape...)
		i += n - 1
	}
	return out
}

// fromJSONEscape returns the length of the JSON escape that starts e and
// its YAML spelling.
func fromJSONEscape(e []byte) (int, []byte) {
	switch {
	case e[1] == '/':
		return 2, []byte("/")
	case e[1] == 'u' && len(e) >= 12 && e[6] == '\\' && e[7] == 'u':
		hi, err1 := strconv.ParseUint(string(e[2:6]), 16, 16)
		lo, err2 := strconv.ParseUint(string(e[8:12]), 16, 16)
		if r := utf16.DecodeRune(rune(hi), rune(lo)); err1 == nil && err2 == nil && r != utf8.RuneError {
			return 12, fmt.Appendf(nil, `\U%08X`, r)
		}
	}
	return 2, e[:2]
}

// yamlError rewords a parse error: "yaml: line 3: ..." -> "bad YAML: line 3: ...".
func yamlError(err error) error {
	return fmt.Errorf("bad YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
}

// mappingEntries returns the entries of mapping m, refusing repeated keys.
func mappingEntries(m *yaml.Node) ([]configEntry, error) {
	var out []configEntry
	firstLine := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := resolveAlias(m.Content[i])
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: a key must be a string, got %s", k.Line, describe(k))
		}
		if l, ok := firstLine[k.Value]; ok {
			return nil, fmt.Errorf("line %d: key %q given twice (first at line %d)", k.Line, k.Value, l)
		}
		firstLine[k.Value] = k.Line
		out = append(out, configEntry{key: k.Value, line: k.Line, value: resolveAlias(m.Content[i+1])})
	}
	return out, nil
}

// resolveAlias returns the node an alias (*name) refers to, else n.
func resolveAlias(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// YAML tags of the scalars a config value may be.
const (
	tagStr   = "!!str"
	tagInt   = "!!int"
	tagFloat = "!!float"
	tagNull  = "!!null"
	tagBool  = "!!bool"
)

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == tagNull }

func isString(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == tagStr }

func isNumber(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && (n.ShortTag() == tagInt || n.ShortTag() == tagFloat)
}

// flagValue returns the text to set flag f to from a config value: a
// string for any flag, a list of strings for a list flag, a number for a
// size.
func flagValue(f *flag.Flag, n *yaml.Node) (string, error) {
	switch {
	case isString(n):
		return n.Value, nil
	case n.Kind == yaml.SequenceNode && listFlags[f.Name]:
		return listValue(n)
	case isNumber(n) && isSize(f):
		return sizeValue(n)
	case n.Kind == yaml.ScalarNode && n.ShortTag() == tagInt && isInt(f):
		return n.Value, nil
	case n.Kind == yaml.ScalarNode && n.ShortTag() == tagBool && isBool(f):
		return n.Value, nil
	}
	return "", fmt.Errorf("want %s, got %s%s", wanted(f), describe(n), hint(n))
}

// listValue joins a list of strings with commas, as the flag takes it.
func listValue(n *yaml.Node) (string, error) {
	l := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		c = resolveAlias(c)
		if !isString(c) {
			return "", fmt.Errorf("list element %d: want a string, got %s%s", i+1, describe(c), hint(c))
		}
		if strings.Contains(c.Value, ",") {
			return "", fmt.Errorf("list element %q contains a comma", c.Value)
		}
		l = append(l, c.Value)
	}
	return strings.Join(l, ","), nil
}

// sizeValue returns a number of bytes as the flag's text. It must be whole
// and in [0, 2^63): 1e9 is a size, 1.5 and -5 are not.
func sizeValue(n *yaml.Node) (string, error) {
	var f float64
	if n.ShortTag() == tagInt {
		var i int64
		if err := n.Decode(&i); err == nil && i >= 0 {
			return strconv.FormatInt(i, 10), nil
		}
	} else if err := n.Decode(&f); err == nil && f >= 0 && f < 1<<63 && f == math.Trunc(f) {
		return strconv.FormatInt(int64(f), 10), nil
	}
	return "", fmt.Errorf("invalid size %s (want a whole number of bytes, at least 0, or a string like \"4GiB\")", n.Value)
}

func isSize(f *flag.Flag) bool {
	_, ok := f.Value.(*byteSize)
	return ok
}

// isInt reports whether f takes a whole number.
func isInt(f *flag.Flag) bool {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	switch g.Get().(type) {
	case int, int64:
		return true
	}
	return false
}

// isBool reports whether f is a switch.
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func wanted(f *flag.Flag) string {
	switch {
	case isInt(f):
		return "a whole number"
	case isBool(f):
		return "true or false"
	case listFlags[f.Name]:
		return "a string or a list of strings"
	case isSize(f):
		return `a size string ("1GiB") or a number of bytes`
	}
	return "a string"
}

// describe names what a value node is, for errors.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch t := n.ShortTag(); t {
	case tagNull:
		return "null"
	case tagStr:
		return strconv.Quote(n.Value)
	case tagInt, tagFloat:
		return "the number " + n.Value
	default:
		return fmt.Sprintf("%s %s", strings.TrimPrefix(t, "!!"), n.Value)
	}
}

// hint tells how to write a scalar of the wrong YAML type as a string.
func hint(n *yaml.Node) string {
	switch {
	case isNull(n):
		return ` (write "" for an empty value)`
	case n.Kind == yaml.ScalarNode && !isString(n):
		return fmt.Sprintf(" (quote it for a string: %q)", n.Value)
	}
	return ""
}
