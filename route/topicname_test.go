package route

import (
	"strings"
	"testing"
)

func TestValidateApsaraTopic(t *testing.T) {
	valid := []string{"abc", "app_db_orders", "ods-orders", "A_b-9", strings.Repeat("x", 64)}
	for _, name := range valid {
		if err := ValidateApsaraTopic(name); err != nil {
			t.Errorf("ValidateApsaraTopic(%q) = %v", name, err)
		}
	}
	tests := []struct {
		name string
		want []string
	}{
		{"app_db.orders", []string{`topic "app_db.orders"`, "'.'", "only letters, digits, '_' and '-'",
			`"<db>.<table>"`, "such as app_db_orders", "use sink-table: app_db_<> with replace-symbol: <>"}},
		{"ab", []string{"2 characters, fewer than the 3"}},
		{"", []string{"0 characters"}},
		{strings.Repeat("x", 65), []string{"65 characters, more than 64", "truncate"}},
		{"orders!", []string{"'!'", "such as orders_"}},
		{"a b", []string{"' '", "such as a_b"}},
		{"订单表", []string{"'订'", "'单'", "3 to 64"}},
		{"a.", []string{"'.'", "2 characters"}},
		{"x.y.z", []string{"'.'", "such as x_y_z", "x_<>"}},
		{"my.t" + strings.Repeat("x", 70), []string{"'.'", "more than 64", "sink-table: my_<>"}},
	}
	for _, tc := range tests {
		err := ValidateApsaraTopic(tc.name)
		if err == nil {
			t.Errorf("ValidateApsaraTopic(%q) = nil", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("ValidateApsaraTopic(%q) = %q, missing %q", tc.name, err, w)
			}
		}
	}
}

func TestValidateKafkaTopic(t *testing.T) {
	for _, name := range []string{"a", "app_db.orders", "a-b_c.d", strings.Repeat("x", 249)} {
		if err := ValidateKafkaTopic(name); err != nil {
			t.Errorf("ValidateKafkaTopic(%q) = %v", name, err)
		}
	}
	tests := []struct{ name, want string }{
		{"", "empty"},
		{".", "not a valid Kafka topic name"},
		{"..", "not a valid Kafka topic name"},
		{strings.Repeat("x", 250), "at most 249"},
		{"app_db.order$", "'$'"},
		{"db.表", "such as db._"},
	}
	for _, tc := range tests {
		if err := ValidateKafkaTopic(tc.name); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ValidateKafkaTopic(%q) = %v, want %q", tc.name, err, tc.want)
		}
	}
}
