// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kubesim

import "strings"

// expand applies Kubernetes' variable references to s, as the kubelet
// does to a container's command, args and env values: $(NAME) becomes the
// value of NAME when vars defines it and stays as written otherwise, and
// $$ becomes a literal $ (so $$(NAME) yields "$(NAME)"). A "$" followed by
// anything else is kept.
//
// This matters for debug pods that carry a shell script in their command:
// the kubelet rewrites the script text before the shell ever sees it.
func expand(s string, vars map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				// Unterminated: "$(" is literal, scanning goes on after it.
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}
