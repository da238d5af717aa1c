// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"strings"
)

// The messages a release without -sources jars adds are read from its
// bytecode: in every method, each `new E` of an exception type (a class
// named ...Exception or ...Error) whose constructor (String) or (String,
// Throwable) gets a message built from constants. The message is the first string the code loads
// between the `new` and the constructor call: a literal (ldc), the recipe
// of Java's invokedynamic string concatenation (\u0001 where a value goes)
// or a String.format pattern (its %s, %d... where values go). An athrow
// right after the constructor makes it a throw; otherwise the exception is
// handed on. The line is the method's line-number entry for the `new`.
//
// What this does not see: a message built in a local variable before the
// `new`, messages of log calls, Scala's by-name log arguments (closures).

// byteSite is an exception construction read from a class file.
type byteSite struct {
	Kind      string // catalog.KindThrow or catalog.KindException
	Exception string // qualified class name
	Text      string // template text ({} for values)
	Line      int    // source line of the `new` (0 when the class has no line table)
}

// classFile is the part of a parsed class file the site reader needs.
type classFile struct {
	name       string // qualified (a.b.C$D)
	interfaces []string
	cp         []cpEntry
	bsm        [][]uint16 // bootstrap methods' static argument indexes
	codes      []methodCode
}

type cpEntry struct {
	tag  byte
	str  string // Utf8
	a, b uint16 // Class: a=name; String: a=utf8; refs: a=class, b=name-and-type; NameAndType: a=name, b=descriptor; InvokeDynamic: a=bsm, b=name-and-type
}

type methodCode struct {
	code  []byte
	lines [][2]int // (start pc, line), in table order
}

// parseClass reads the constant pool, the methods' code and line tables and
// the bootstrap methods of a class file.
func parseClass(b []byte) (*classFile, error) {
	r := &byteReader{b: b}
	if r.u4() != 0xCAFEBABE {
		return nil, errClassFormat
	}
	r.skip(4) // minor, major
	n := int(r.u2())
	cf := &classFile{cp: make([]cpEntry, n)}
	for i := 1; i < n && r.err == nil; i++ {
		tag := r.u1()
		e := cpEntry{tag: tag}
		switch tag {
		case 1:
			l := int(r.u2())
			e.str = string(r.bytes(l))
		case 7, 8, 16, 19, 20:
			e.a = r.u2()
		case 15:
			r.skip(3)
		case 9, 10, 11, 12, 17, 18:
			e.a, e.b = r.u2(), r.u2()
		case 3, 4:
			r.skip(4)
		case 5, 6:
			r.skip(8)
			cf.cp[i] = e
			i++
			continue
		default:
			return nil, fmt.Errorf("%w: constant tag %d", errClassFormat, tag)
		}
		cf.cp[i] = e
	}
	r.skip(2) // access flags
	cf.name = strings.ReplaceAll(cf.className(r.u2()), "/", ".")
	r.skip(2) // super
	for k, nk := 0, int(r.u2()); k < nk && r.err == nil; k++ {
		cf.interfaces = append(cf.interfaces, cf.className(r.u2()))
	}
	for f, nf := 0, int(r.u2()); f < nf && r.err == nil; f++ {
		r.skip(6)
		r.skipAttributes()
	}
	for m, nm := 0, int(r.u2()); m < nm && r.err == nil; m++ {
		r.skip(6)
		for a, na := 0, int(r.u2()); a < na && r.err == nil; a++ {
			name := cf.utf8(r.u2())
			body := r.bytes(int(r.u4()))
			if name == "Code" {
				cf.codes = append(cf.codes, cf.parseCode(body))
			}
		}
	}
	for a, na := 0, int(r.u2()); a < na && r.err == nil; a++ {
		name := cf.utf8(r.u2())
		body := &byteReader{b: r.bytes(int(r.u4()))}
		if name != "BootstrapMethods" {
			continue
		}
		for k, nk := 0, int(body.u2()); k < nk && body.err == nil; k++ {
			body.skip(2)
			args := make([]uint16, body.u2())
			for j := range args {
				args[j] = body.u2()
			}
			cf.bsm = append(cf.bsm, args)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return cf, nil
}

// parseCode reads a Code attribute's bytecode and line-number table.
func (cf *classFile) parseCode(body []byte) methodCode {
	r := &byteReader{b: body}
	r.skip(4) // max stack, max locals
	mc := methodCode{code: r.bytes(int(r.u4()))}
	r.skip(8 * int(r.u2())) // exception table
	for a, na := 0, int(r.u2()); a < na && r.err == nil; a++ {
		name := cf.utf8(r.u2())
		attr := &byteReader{b: r.bytes(int(r.u4()))}
		if name != "LineNumberTable" {
			continue
		}
		for k, nk := 0, int(attr.u2()); k < nk && attr.err == nil; k++ {
			mc.lines = append(mc.lines, [2]int{int(attr.u2()), int(attr.u2())})
		}
	}
	return mc
}

func (cf *classFile) utf8(i uint16) string {
	if int(i) < len(cf.cp) && cf.cp[i].tag == 1 {
		return cf.cp[i].str
	}
	return ""
}

func (cf *classFile) className(i uint16) string {
	if int(i) < len(cf.cp) && cf.cp[i].tag == 7 {
		return cf.utf8(cf.cp[i].a)
	}
	return ""
}

// ref gives a method reference's class, name and descriptor.
func (cf *classFile) ref(i uint16) (class, name, desc string) {
	if int(i) >= len(cf.cp) {
		return "", "", ""
	}
	e := cf.cp[i]
	if e.tag != 10 && e.tag != 11 {
		return "", "", ""
	}
	nt := cf.cp[e.b]
	return cf.className(e.a), cf.utf8(nt.a), cf.utf8(nt.b)
}

// lineAt is the source line of the instruction at pc.
func (mc methodCode) lineAt(pc int) int {
	line, best := 0, -1
	for _, l := range mc.lines {
		if l[0] <= pc && l[0] > best {
			line, best = l[1], l[0]
		}
	}
	return line
}

// reFormatVerb is a java.util.Formatter conversion.
var reFormatVerb = regexp.MustCompile(`%(?:\d+\$)?[-#+ 0,(<]*\d*(?:\.\d+)?[a-zA-Z]`)

// generatedClass says whether a class is generated or bundled code, which
// the source reading leaves out too (its generated() reads the sources'
// "AUTOMATICALLY GENERATED" header, which a class file does not keep):
// Kafka's protocol and record classes (they implement Message) and their
// JSON converters, and the shaded libraries.
func (cf *classFile) generatedClass() bool {
	top, _, _ := strings.Cut(cf.name, "$")
	if strings.HasPrefix(cf.name, "org.apache.kafka.shaded.") || strings.HasSuffix(top, "JsonConverter") || strings.HasSuffix(top, "JsonConverters") {
		return true
	}
	for _, i := range cf.interfaces {
		if i == "org/apache/kafka/common/protocol/Message" || i == "org/apache/kafka/common/protocol/ApiMessage" {
			return true
		}
	}
	return false
}

// isExceptionType says whether an internal class name is an exception type
// by its name, as Kafka, Scala and the JDK name theirs.
func isExceptionType(internal string) bool {
	base := internal[strings.LastIndexByte(internal, '/')+1:]
	return strings.HasSuffix(base, "Exception") || strings.HasSuffix(base, "Error")
}

// sites reads the exception constructions of every method of the class.
func (cf *classFile) sites() []byteSite {
	type pending struct {
		class   string
		pc      int
		text    string
		format  bool
		partial bool // the message is built by a StringBuilder or Scala's StringContext: the first literal is not all of it
	}
	var out []byteSite
	for _, mc := range cf.codes {
		var stack []*pending
		note := func(s string) {
			if len(stack) > 0 && stack[len(stack)-1].text == "" {
				stack[len(stack)-1].text = s
			}
		}
		code := mc.code
		for pc := 0; pc < len(code); {
			op := code[pc]
			size := opSize(code, pc)
			if size <= 0 {
				break // unknown opcode: stop reading this method
			}
			switch op {
			case 0xbb: // new
				stack = append(stack, &pending{class: cf.className(binary.BigEndian.Uint16(code[pc+1:])), pc: pc})
			case 0x12, 0x13: // ldc, ldc_w
				i := uint16(code[pc+1])
				if op == 0x13 {
					i = binary.BigEndian.Uint16(code[pc+1:])
				}
				if int(i) < len(cf.cp) && cf.cp[i].tag == 8 {
					note(cf.utf8(cf.cp[i].a))
				}
			case 0xba: // invokedynamic
				e := cf.cp[binary.BigEndian.Uint16(code[pc+1:])]
				if e.tag == 18 && cf.utf8(cf.cp[e.b].a) == "makeConcatWithConstants" && int(e.a) < len(cf.bsm) {
					if args := cf.bsm[e.a]; len(args) > 0 && cf.cp[args[0]].tag == 8 {
						note(strings.ReplaceAll(cf.utf8(cf.cp[args[0]].a), "\x01", "{}"))
					}
				}
			case 0xb6: // invokevirtual
				if class, _, _ := cf.ref(binary.BigEndian.Uint16(code[pc+1:])); len(stack) > 0 && (strings.HasSuffix(class, "StringBuilder") || class == "scala/StringContext") {
					stack[len(stack)-1].partial = true
				}
			case 0xb8: // invokestatic
				if class, name, _ := cf.ref(binary.BigEndian.Uint16(code[pc+1:])); class == "java/lang/String" && name == "format" && len(stack) > 0 {
					stack[len(stack)-1].format = true
				}
			case 0xb7: // invokespecial
				class, name, desc := cf.ref(binary.BigEndian.Uint16(code[pc+1:]))
				if name != "<init>" || len(stack) == 0 || stack[len(stack)-1].class != class {
					break
				}
				p := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if !isExceptionType(class) || p.text == "" || p.partial || (desc != "(Ljava/lang/String;)V" && desc != "(Ljava/lang/String;Ljava/lang/Throwable;)V") {
					break
				}
				text := p.text
				if p.format {
					text = reFormatVerb.ReplaceAllString(text, "{}")
				}
				kind := "exception"
				if pc+size < len(code) && code[pc+size] == 0xbf {
					kind = "throw"
				}
				out = append(out, byteSite{Kind: kind, Exception: strings.ReplaceAll(class, "/", "."), Text: text, Line: mc.lineAt(p.pc)})
			}
			pc += size
		}
	}
	return out
}

// opSize is the length of the instruction at pc (0 when unknown).
func opSize(code []byte, pc int) int {
	op := code[pc]
	switch {
	case op <= 0x0f, op >= 0x1a && op <= 0x35, op >= 0x3b && op <= 0x83, op >= 0x85 && op <= 0x98, op >= 0xac && op <= 0xb1, op == 0xbe, op == 0xbf, op == 0xc2, op == 0xc3:
		return 1
	case op == 0x10, op == 0x12, op >= 0x15 && op <= 0x19, op >= 0x36 && op <= 0x3a, op == 0xa9, op == 0xbc:
		return 2
	case op == 0x11, op == 0x13, op == 0x14, op == 0x84, op >= 0x99 && op <= 0xa8, op >= 0xb2 && op <= 0xb8, op == 0xbb, op == 0xbd, op == 0xc0, op == 0xc1, op == 0xc6, op == 0xc7:
		return 3
	case op == 0xc5:
		return 4
	case op == 0xb9, op == 0xba, op == 0xc8, op == 0xc9:
		return 5
	case op == 0xc4: // wide
		if pc+1 < len(code) && code[pc+1] == 0x84 {
			return 6
		}
		return 4
	case op == 0xaa, op == 0xab: // tableswitch, lookupswitch
		p := pc + 1 + (3-pc%4)%4 // padding to a 4-byte boundary
		if op == 0xaa {
			if p+12 > len(code) {
				return 0
			}
			lo, hi := int32(binary.BigEndian.Uint32(code[p+4:])), int32(binary.BigEndian.Uint32(code[p+8:]))
			return p + 12 + 4*int(hi-lo+1) - pc
		}
		if p+8 > len(code) {
			return 0
		}
		return p + 8 + 8*int(binary.BigEndian.Uint32(code[p+4:])) - pc
	}
	return 0
}

// byteReader reads big-endian values, remembering the first overrun.
type byteReader struct {
	b   []byte
	p   int
	err error
}

func (r *byteReader) bytes(n int) []byte {
	if r.err != nil || n < 0 || r.p+n > len(r.b) {
		r.err = errClassFormat
		return nil
	}
	s := r.b[r.p : r.p+n]
	r.p += n
	return s
}

func (r *byteReader) skip(n int) { r.bytes(n) }

func (r *byteReader) u1() byte {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *byteReader) u2() uint16 {
	if b := r.bytes(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (r *byteReader) u4() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (r *byteReader) skipAttributes() {
	for a, na := 0, int(r.u2()); a < na && r.err == nil; a++ {
		r.skip(2)
		r.skip(int(r.u4()))
	}
}
