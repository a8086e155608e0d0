package pipeline

import "testing"

// TestSchemaChangeBehaviorValues: Flink CDC's five values load, in any case, as Flink
// CDC's enum parsing accepts them.
func TestSchemaChangeBehaviorValues(t *testing.T) {
	tests := []struct {
		value string
		want  SchemaChangeBehavior
	}{
		{"EVOLVE", SchemaEvolve},
		{"try_evolve", SchemaTryEvolve},
		{"lenient", SchemaLenient},
		{"Ignore", SchemaIgnore},
		{"EXCEPTION", SchemaException},
	}
	for _, tt := range tests {
		file := minimal + "pipeline:\n  schema.change.behavior: " + tt.value + "\n"
		def, err := Parse("jobs/orders.yaml", []byte(file), testOptions())
		if err != nil {
			t.Fatalf("%s: %v", tt.value, err)
		}
		if got := def.Pipeline.SchemaChangeBehavior; got != tt.want {
			t.Errorf("%s: loaded as %v, want %v", tt.value, got, tt.want)
		}
	}
}
