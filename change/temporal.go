package change

// Temporal values are packed into Value.Num so that a row of them allocates nothing.
//
//	Date:      year<<9 | month<<5 | day                              (year 0..9999)
//	DateTime:  date<<37 | hour<<32 | minute<<26 | second<<20 | micro (wall clock, no zone)
//	Timestamp: int64 microseconds since 1970-01-01 00:00:00 UTC
//	Time:      int64 signed microseconds (MySQL TIME spans ±838:59:59.999999)

const (
	microBits  = 20
	secondBits = 6
	minuteBits = 6
	hourBits   = 5
	clockBits  = microBits + secondBits + minuteBits + hourBits // 37
)

// DateValue returns a Date value, or Null when year, month or day is zero (MySQL's zero
// dates and dates with zero parts render as null).
func DateValue(year, month, day int) Value {
	if year == 0 || month == 0 || day == 0 {
		return Value{}
	}
	return Value{Kind: Date, Num: packDate(year, month, day)}
}

// DateTimeValue returns a DateTime value (a wall clock without a zone), or Null when the date
// has a zero part.
func DateTimeValue(year, month, day, hour, minute, second, micro int) Value {
	if year == 0 || month == 0 || day == 0 {
		return Value{}
	}
	clock := uint64(hour)<<(microBits+secondBits+minuteBits) | uint64(minute)<<(microBits+secondBits) |
		uint64(second)<<microBits | uint64(micro)
	return Value{Kind: DateTime, Num: packDate(year, month, day)<<clockBits | clock}
}

// TimestampValue returns a Timestamp value from microseconds since the Unix epoch (UTC), or
// Null for MySQL's zero timestamp (0).
func TimestampValue(unixMicro int64) Value {
	if unixMicro == 0 {
		return Value{}
	}
	return Value{Kind: Timestamp, Num: uint64(unixMicro)}
}

// TimeValue returns a Time value from signed microseconds.
func TimeValue(micros int64) Value { return Value{Kind: Time, Num: uint64(micros)} }

func packDate(year, month, day int) uint64 {
	return uint64(year)<<9 | uint64(month)<<5 | uint64(day)
}

// Date returns the parts of a Date or DateTime value.
func (v Value) Date() (year, month, day int) {
	d := v.Num
	if v.Kind == DateTime {
		d >>= clockBits
	}
	return int(d >> 9), int(d >> 5 & 0xf), int(d & 0x1f)
}

// Clock returns the time-of-day parts of a DateTime value.
func (v Value) Clock() (hour, minute, second, micro int) {
	c := v.Num
	return int(c >> (microBits + secondBits + minuteBits) & 0x1f), int(c >> (microBits + secondBits) & 0x3f),
		int(c >> microBits & 0x3f), int(c & (1<<microBits - 1))
}

// Micros returns the microseconds of a Timestamp (since the epoch) or Time value.
func (v Value) Micros() int64 { return int64(v.Num) }
