package acp

import (
	"bytes"
	"encoding/json"
)

// Optional is a three-state field: absent, explicitly null, or a value. Use it with the
// `omitzero` option where the protocol gives absent and null different meanings (for example
// SessionInfoUpdate.Title: absent = unchanged, null = clear).
type Optional[T any] struct {
	state optionalState
	value T
}

type optionalState uint8

const (
	optionalAbsent optionalState = iota
	optionalNull
	optionalValue
)

// Some returns an Optional holding v.
func Some[T any](v T) Optional[T] { return Optional[T]{state: optionalValue, value: v} }

// Null returns an Optional that marshals as JSON null.
func Null[T any]() Optional[T] { return Optional[T]{state: optionalNull} }

// IsZero reports whether o is absent; `omitzero` uses it to leave the key out.
func (o Optional[T]) IsZero() bool { return o.state == optionalAbsent }

// IsNull reports whether o is an explicit null.
func (o Optional[T]) IsNull() bool { return o.state == optionalNull }

// Get returns the value and whether there is one.
func (o Optional[T]) Get() (T, bool) { return o.value, o.state == optionalValue }

// MarshalJSON implements [json.Marshaler]. An absent Optional marshals as null too; use
// `omitzero` to leave it out.
func (o Optional[T]) MarshalJSON() ([]byte, error) {
	if o.state != optionalValue {
		return []byte("null"), nil
	}
	return json.Marshal(o.value)
}

// UnmarshalJSON implements [json.Unmarshaler].
func (o *Optional[T]) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		var zero T
		o.state, o.value = optionalNull, zero
		return nil
	}
	if err := json.Unmarshal(data, &o.value); err != nil {
		return err
	}
	o.state = optionalValue
	return nil
}
