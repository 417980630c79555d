// Package apitest makes what tests of the Flight API's security need: a
// certificate authority of the test's own (crypto/x509, self-signed) that
// signs certificates for 127.0.0.1, written as PEM files in a temporary
// directory removed by the test's cleanup.
package apitest
