package upsert

import "github.com/twmb/franz-go/pkg/kgo"

// Options parses props and returns every franz-go option they give, with Java's meaning of
// acks and enable.idempotence (see [Properties.producerOpts]); only the tests need them all at
// once, so it is not part of the package's API.
func Options(props map[string]string) ([]kgo.Opt, error) {
	p, err := ParseProperties(props)
	if err != nil {
		return nil, err
	}
	return append(p.ClientOpts(), p.producerOpts()...), nil
}
