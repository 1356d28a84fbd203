package a2aapi_test

// A client of the agent written after Flutter's genui_a2a 0.10.1, which carries its own small
// A2A client and feeds A2UI to genui; it drives the agent the way that package does and
// fails wherever the Dart code would throw, drop or misrender what the server sends.
//
// Source: github.com/flutter/genui at 8fc3d8a7 (the release commit of genui_a2a 0.10.1 and
// a2ui_core 0.1.0). File references below are to that commit:
//
//   - packages/genui_a2a/lib/src/a2ui_agent_connector.dart (the connector: "connector.dart"),
//   - packages/genui_a2a/lib/src/a2a/client/{a2a_client,sse_transport,http_transport,sse_parser}.dart,
//   - packages/genui_a2a/lib/src/a2a/core/*.dart and *.g.dart (JSON (de)serialisation),
//   - packages/a2ui_core/lib/src/core/messages.dart (A2uiMessage.fromJson),
//   - packages/genui/lib/src/... (how genui builds actions and reads text),
//   - examples/verdure/client/lib/features/ai/ai_provider.dart (the example app).
//
// The HTTP layer is package:http on dart:io: dart-lang/http at a0d49cb2
// (pkgs/http/lib/src/request.dart, pkgs/http/CHANGELOG.md) and dart-lang/sdk
// (sdk/lib/_http/http_impl.dart).

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
)

const (
	// dartUserAgent is dart:io's HttpClient.userAgent, "Dart/<major>.<minor> (dart:io)"
	// (http_impl.dart, _getHttpVersion); genui_a2a 0.10.1 needs Dart >= 3.10 (pubspec.yaml).
	dartUserAgent = "Dart/3.10 (dart:io)"
	// flutterCatalogID is genui's basic catalog id (packages/genui/lib/src/primitives/constants.dart:6-7).
	flutterCatalogID = "https://a2ui.org/specification/v0_9/basic_catalog.json"

	flutterTurnTimeout  = 60 * time.Second // a whole turn of the offline model
	flutterCloseTimeout = 5 * time.Second  // from the final status to the end of the stream
)

// --- JSON as Dart writes it ---------------------------------------------------------------

// dartObj is a JSON object whose keys keep their order: Dart map literals are
// LinkedHashMaps, and jsonEncode writes them in insertion order, compactly, without
// escaping HTML characters.
type dartObj []dartKV

type dartKV struct {
	K string
	V any
}

func (o dartObj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := dartEncode(kv.K)
		if err != nil {
			return nil, err
		}
		v, err := dartEncode(kv.V)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// dartEncode is jsonEncode.
func dartEncode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func mustDartEncode(t testing.TB, v any) []byte {
	t.Helper()
	b, err := dartEncode(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dartDecode is jsonDecode: UTF-8 (utf8.decoder throws on malformed input), one JSON value,
// integers told apart from doubles (json.Number).
func dartDecode(b []byte) (any, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("FormatException: malformed UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("FormatException: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("FormatException: data after the JSON value")
	}
	return v, nil
}

// dartTrim is String.trim: Unicode white space and the BOM.
func dartTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' })
}

// uuidV4 is const Uuid().v4() (connector.dart:108, 308).
func uuidV4() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// dartNow is DateTime.now().toIso8601String() (genui ui_models.dart:66, connector.dart:294):
// local time, milliseconds, then microseconds when they are not zero (the VM clock has
// them), and no zone designator.
func dartNow() string {
	now := time.Now()
	s := now.Format("2006-01-02T15:04:05.000")
	if us := now.Nanosecond() / 1000 % 1000; us != 0 {
		s += fmt.Sprintf("%03d", us)
	}
	return s
}

// --- Dart's casts, as the generated fromJson code makes them -------------------------------

// dartTypeOf names v's runtime type as Dart would in a TypeError.
func dartTypeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "Null"
	case string:
		return "String"
	case bool:
		return "bool"
	case json.Number:
		if isDartInt(x) {
			return "int"
		}
		return "double"
	case []any:
		return "List<dynamic>"
	case map[string]any:
		return "_Map<String, dynamic>"
	}
	return fmt.Sprintf("%T", v)
}

// isDartInt reports whether jsonDecode makes an int of a number: a literal without fraction
// or exponent.
func isDartInt(n json.Number) bool { return !strings.ContainsAny(string(n), ".eE") }

func castError(at string, v any, want string) error {
	return fmt.Errorf("%s: TypeError: type '%s' is not a subtype of type '%s'", at, dartTypeOf(v), want)
}

func jsonString(m map[string]any, k, at string) (string, error) {
	s, ok := m[k].(string)
	if !ok {
		return "", castError(at+"."+k, m[k], "String")
	}
	return s, nil
}

func jsonOptString(m map[string]any, k, at string) error {
	if v := m[k]; v != nil {
		if _, ok := v.(string); !ok {
			return castError(at+"."+k, v, "String?")
		}
	}
	return nil
}

func jsonMap(v any, at string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, castError(at, v, "Map<String, dynamic>")
	}
	return m, nil
}

func jsonOptMap(m map[string]any, k, at string) error {
	if v := m[k]; v != nil {
		if _, ok := v.(map[string]any); !ok {
			return castError(at+"."+k, v, "Map<String, dynamic>?")
		}
	}
	return nil
}

func jsonList(v any, at string) ([]any, error) {
	l, ok := v.([]any)
	if !ok {
		return nil, castError(at, v, "List<dynamic>")
	}
	return l, nil
}

func jsonStringList(v any, at string) error {
	l, err := jsonList(v, at)
	if err != nil {
		return err
	}
	for i, e := range l {
		if _, ok := e.(string); !ok {
			return castError(at+"["+strconv.Itoa(i)+"]", e, "String")
		}
	}
	return nil
}

func jsonOptStringList(m map[string]any, k, at string) error {
	if v := m[k]; v != nil {
		return jsonStringList(v, at+"."+k)
	}
	return nil
}

func jsonBool(m map[string]any, k, at string) error {
	if _, ok := m[k].(bool); !ok {
		return castError(at+"."+k, m[k], "bool")
	}
	return nil
}

func jsonOptBool(m map[string]any, k, at string) error {
	if v := m[k]; v != nil {
		if _, ok := v.(bool); !ok {
			return castError(at+"."+k, v, "bool?")
		}
	}
	return nil
}

func jsonOptNum(m map[string]any, k, at string) error {
	if v := m[k]; v != nil {
		if _, ok := v.(json.Number); !ok {
			return castError(at+"."+k, v, "num?")
		}
	}
	return nil
}

// jsonEnum is json_annotation's $enumDecode: the value must be one of the enum's.
func jsonEnum(m map[string]any, k, at string, values ...string) (string, error) {
	v := m[k]
	s, _ := v.(string)
	for _, w := range values {
		if s == w && v != nil {
			return s, nil
		}
	}
	if v == nil {
		return "", fmt.Errorf("%s.%s: ArgumentError: A value must be provided. Supported values: %s", at, k, strings.Join(values, ", "))
	}
	return "", fmt.Errorf("%s.%s: ArgumentError: `%v` is not one of the supported values: %s", at, k, v, strings.Join(values, ", "))
}

// --- The A2A types of genui_a2a (lib/src/a2a/core) -----------------------------------------

// dartTaskStates is TaskState, kebab-cased (task.dart:148-167, task.g.dart:52-62).
var dartTaskStates = []string{"submitted", "working", "input-required", "completed", "canceled", "failed", "rejected", "auth-required", "unknown"}

type dartStatus struct {
	State   string
	Message map[string]any   // nil when the status has none
	Parts   []map[string]any // the message's parts
}

type dartTask struct {
	ID, ContextID string
	Status        dartStatus
}

// parseDartTask is Task.fromJson (task.g.dart:11-24): history and artifacts are parsed too.
func parseDartTask(v any, at string) (dartTask, error) {
	m, err := jsonMap(v, at)
	if err != nil {
		return dartTask{}, err
	}
	var t dartTask
	if t.ID, err = jsonString(m, "id", at); err != nil {
		return t, err
	}
	if t.ContextID, err = jsonString(m, "contextId", at); err != nil {
		return t, err
	}
	if t.Status, err = parseDartStatus(m["status"], at+".status"); err != nil {
		return t, err
	}
	if h := m["history"]; h != nil {
		l, err := jsonList(h, at+".history")
		if err != nil {
			return t, err
		}
		for i, e := range l {
			if _, _, err := parseDartMessage(e, fmt.Sprintf("%s.history[%d]", at, i)); err != nil {
				return t, err
			}
		}
	}
	if a := m["artifacts"]; a != nil {
		l, err := jsonList(a, at+".artifacts")
		if err != nil {
			return t, err
		}
		for i, e := range l {
			if err := parseDartArtifact(e, fmt.Sprintf("%s.artifacts[%d]", at, i)); err != nil {
				return t, err
			}
		}
	}
	if err := jsonOptMap(m, "metadata", at); err != nil {
		return t, err
	}
	if err := jsonOptNum(m, "lastUpdated", at); err != nil {
		return t, err
	}
	return t, jsonOptString(m, "kind", at)
}

// parseDartStatus is TaskStatus.fromJson (task.g.dart:37-43).
func parseDartStatus(v any, at string) (dartStatus, error) {
	m, err := jsonMap(v, at)
	if err != nil {
		return dartStatus{}, err
	}
	var s dartStatus
	if s.State, err = jsonEnum(m, "state", at, dartTaskStates...); err != nil {
		return s, err
	}
	if m["message"] != nil {
		if s.Message, s.Parts, err = parseDartMessage(m["message"], at+".message"); err != nil {
			return s, err
		}
	}
	return s, jsonOptString(m, "timestamp", at)
}

// parseDartMessage is Message.fromJson (message.g.dart:11-27).
func parseDartMessage(v any, at string) (map[string]any, []map[string]any, error) {
	m, err := jsonMap(v, at)
	if err != nil {
		return nil, nil, err
	}
	if _, err := jsonEnum(m, "role", at, "user", "agent"); err != nil {
		return nil, nil, err
	}
	l, err := jsonList(m["parts"], at+".parts")
	if err != nil {
		return nil, nil, err
	}
	parts := make([]map[string]any, len(l))
	for i, e := range l {
		if parts[i], err = parseDartPart(e, fmt.Sprintf("%s.parts[%d]", at, i)); err != nil {
			return nil, nil, err
		}
	}
	for _, check := range []func() error{
		func() error { return jsonOptMap(m, "metadata", at) },
		func() error { return jsonOptStringList(m, "extensions", at) },
		func() error { return jsonOptStringList(m, "referenceTaskIds", at) },
		func() error { _, err := jsonString(m, "messageId", at); return err },
		func() error { return jsonOptString(m, "taskId", at) },
		func() error { return jsonOptString(m, "contextId", at) },
		func() error { return jsonOptString(m, "kind", at) },
	} {
		if err := check(); err != nil {
			return nil, nil, err
		}
	}
	return m, parts, nil
}

// parseDartPart is Part.fromJson (part.dart:21-33; part.g.dart:11-45): kinds text, file
// and data only; a DataPart's data must be an object.
func parseDartPart(v any, at string) (map[string]any, error) {
	m, err := jsonMap(v, at)
	if err != nil {
		return nil, err
	}
	if err := jsonOptString(m, "kind", at); err != nil {
		return nil, err
	}
	switch m["kind"] {
	case "text":
		_, err = jsonString(m, "text", at)
	case "file":
		err = parseDartFile(m["file"], at+".file")
	case "data":
		_, err = jsonMap(m["data"], at+".data")
	default:
		err = fmt.Errorf("%s: ArgumentError: Unknown Part kind: %v", at, m["kind"])
	}
	if err != nil {
		return nil, err
	}
	return m, jsonOptMap(m, "metadata", at)
}

// parseDartFile is FileType.fromJson (part.dart:174-193; part.g.dart:47-68).
func parseDartFile(v any, at string) error {
	m, err := jsonMap(v, at)
	if err != nil {
		return err
	}
	typ, hasType := m["type"]
	if !hasType {
		if _, ok := m["bytes"]; ok {
			typ = "bytes"
		} else if _, ok := m["uri"]; ok {
			typ = "uri"
		}
	}
	if typ != nil {
		if _, ok := typ.(string); !ok {
			return castError(at+".type", typ, "String?")
		}
	}
	switch typ {
	case "uri", "bytes":
		if _, err := jsonString(m, typ.(string), at); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%s: ArgumentError: Unknown FileType type: %v", at, typ)
	}
	if err := jsonOptString(m, "name", at); err != nil {
		return err
	}
	return jsonOptString(m, "mimeType", at)
}

// parseDartArtifact is Artifact.fromJson (task.g.dart:64-75).
func parseDartArtifact(v any, at string) error {
	m, err := jsonMap(v, at)
	if err != nil {
		return err
	}
	if _, err := jsonString(m, "artifactId", at); err != nil {
		return err
	}
	for _, k := range []string{"name", "description"} {
		if err := jsonOptString(m, k, at); err != nil {
			return err
		}
	}
	l, err := jsonList(m["parts"], at+".parts")
	if err != nil {
		return err
	}
	for i, e := range l {
		if _, err := parseDartPart(e, fmt.Sprintf("%s.parts[%d]", at, i)); err != nil {
			return err
		}
	}
	if err := jsonOptMap(m, "metadata", at); err != nil {
		return err
	}
	return jsonOptStringList(m, "extensions", at)
}

// parseDartStatusUpdate is StatusUpdate.fromJson and TaskStatusUpdate.fromJson
// (events.g.dart:11-17, 28-35): taskId, contextId and status required, final optional.
func parseDartStatusUpdate(m map[string]any, at string) (dartTask, error) {
	var t dartTask
	var err error
	if err = jsonOptString(m, "kind", at); err != nil {
		return t, err
	}
	if t.ID, err = jsonString(m, "taskId", at); err != nil {
		return t, err
	}
	if t.ContextID, err = jsonString(m, "contextId", at); err != nil {
		return t, err
	}
	if t.Status, err = parseDartStatus(m["status"], at+".status"); err != nil {
		return t, err
	}
	return t, jsonOptBool(m, "final", at)
}

// parseDartArtifactUpdate is ArtifactUpdate.fromJson (events.g.dart:46-54): append and
// lastChunk are required.
func parseDartArtifactUpdate(m map[string]any, at string) error {
	for _, check := range []func() error{
		func() error { return jsonOptString(m, "kind", at) },
		func() error { _, err := jsonString(m, "taskId", at); return err },
		func() error { _, err := jsonString(m, "contextId", at); return err },
		func() error { return parseDartArtifact(m["artifact"], at+".artifact") },
		func() error { return jsonBool(m, "append", at) },
		func() error { return jsonBool(m, "lastChunk", at) },
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// dartTransports is TransportProtocol (agent_interface.dart:13-25).
var dartTransports = []string{"JSONRPC", "GRPC", "HTTP+JSON"}

// parseDartAgentCard is AgentCard.fromJson (agent_card.g.dart:11-56) with the types it
// nests (agent_capabilities.g.dart:11-19, agent_extension.g.dart:11-17,
// agent_interface.g.dart:11-15, agent_provider.g.dart:11-15, agent_skill.g.dart:11-35,
// security_scheme.dart:27-43; of a security scheme only its type is checked).
func parseDartAgentCard(m map[string]any) error {
	const at = "card"
	for _, k := range []string{"protocolVersion", "name", "description", "url", "version"} {
		if _, err := jsonString(m, k, at); err != nil {
			return err
		}
	}
	if m["preferredTransport"] != nil {
		if _, err := jsonEnum(m, "preferredTransport", at, dartTransports...); err != nil {
			return err
		}
	}
	if v := m["additionalInterfaces"]; v != nil {
		l, err := jsonList(v, at+".additionalInterfaces")
		if err != nil {
			return err
		}
		for i, e := range l {
			ia := fmt.Sprintf("%s.additionalInterfaces[%d]", at, i)
			im, err := jsonMap(e, ia)
			if err != nil {
				return err
			}
			if _, err := jsonString(im, "url", ia); err != nil {
				return err
			}
			if _, err := jsonEnum(im, "transport", ia, dartTransports...); err != nil {
				return err
			}
		}
	}
	for _, k := range []string{"iconUrl", "documentationUrl"} {
		if err := jsonOptString(m, k, at); err != nil {
			return err
		}
	}
	if v := m["provider"]; v != nil {
		pm, err := jsonMap(v, at+".provider")
		if err != nil {
			return err
		}
		for _, k := range []string{"organization", "url"} {
			if _, err := jsonString(pm, k, at+".provider"); err != nil {
				return err
			}
		}
	}
	caps, err := jsonMap(m["capabilities"], at+".capabilities")
	if err != nil {
		return err
	}
	for _, k := range []string{"streaming", "pushNotifications", "stateTransitionHistory"} {
		if err := jsonOptBool(caps, k, at+".capabilities"); err != nil {
			return err
		}
	}
	if v := caps["extensions"]; v != nil {
		l, err := jsonList(v, at+".capabilities.extensions")
		if err != nil {
			return err
		}
		for i, e := range l {
			ea := fmt.Sprintf("%s.capabilities.extensions[%d]", at, i)
			em, err := jsonMap(e, ea)
			if err != nil {
				return err
			}
			if _, err := jsonString(em, "uri", ea); err != nil {
				return err
			}
			if err := jsonOptString(em, "description", ea); err != nil {
				return err
			}
			if err := jsonOptBool(em, "required", ea); err != nil {
				return err
			}
			if err := jsonOptMap(em, "params", ea); err != nil {
				return err
			}
		}
	}
	if v := m["securitySchemes"]; v != nil {
		sm, err := jsonMap(v, at+".securitySchemes")
		if err != nil {
			return err
		}
		for k, s := range sm {
			sa := at + ".securitySchemes." + k
			ss, err := jsonMap(s, sa)
			if err != nil {
				return err
			}
			if _, err := jsonEnum(ss, "type", sa, "apiKey", "http", "oauth2", "openIdConnect", "mutualTls"); err != nil {
				return err
			}
		}
	}
	security := func(v any, sa string) error {
		if v == nil {
			return nil
		}
		l, err := jsonList(v, sa)
		if err != nil {
			return err
		}
		for i, e := range l {
			req, err := jsonMap(e, fmt.Sprintf("%s[%d]", sa, i))
			if err != nil {
				return err
			}
			for k, scopes := range req {
				if err := jsonStringList(scopes, fmt.Sprintf("%s[%d].%s", sa, i, k)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := security(m["security"], at+".security"); err != nil {
		return err
	}
	for _, k := range []string{"defaultInputModes", "defaultOutputModes"} {
		if err := jsonStringList(m[k], at+"."+k); err != nil {
			return err
		}
	}
	skills, err := jsonList(m["skills"], at+".skills")
	if err != nil {
		return err
	}
	for i, e := range skills {
		sa := fmt.Sprintf("%s.skills[%d]", at, i)
		sk, err := jsonMap(e, sa)
		if err != nil {
			return err
		}
		for _, k := range []string{"id", "name", "description"} {
			if _, err := jsonString(sk, k, sa); err != nil {
				return err
			}
		}
		if err := jsonStringList(sk["tags"], sa+".tags"); err != nil {
			return err
		}
		for _, k := range []string{"examples", "inputModes", "outputModes"} {
			if err := jsonOptStringList(sk, k, sa); err != nil {
				return err
			}
		}
		if err := security(sk["security"], sa+".security"); err != nil {
			return err
		}
	}
	return jsonOptBool(m, "supportsAuthenticatedExtendedCard", at)
}

// dartRPCException is an A2AException from a JSON-RPC error (a2a_client.dart:27-45,
// sse_parser.dart:86-92): code an int, message a String, data an object or absent.
type dartRPCException struct {
	Code    int64
	Message string
	Data    map[string]any
}

func (e *dartRPCException) Error() string {
	return fmt.Sprintf("A2AException(code %d): %s", e.Code, e.Message)
}

// parseDartRPCError returns the exception the error becomes, or an error when reading it
// fails (the turn fails either way, with a parsing exception instead).
func parseDartRPCError(v any) (*dartRPCException, error) {
	m, err := jsonMap(v, "error")
	if err != nil {
		return nil, err
	}
	code, ok := m["code"].(json.Number)
	if !ok || !isDartInt(code) {
		return nil, castError("error.code", m["code"], "int")
	}
	n, _ := code.Int64()
	msg, err := jsonString(m, "message", "error")
	if err != nil {
		return nil, err
	}
	if err := jsonOptMap(m, "data", "error"); err != nil {
		return nil, err
	}
	data, _ := m["data"].(map[string]any)
	return &dartRPCException{Code: n, Message: msg, Data: data}, nil
}

// --- a2ui_core's A2uiMessage.fromJson ------------------------------------------------------

// a2uiOperations are the message body keys (messages.dart:29-34); the connector parses a
// DataPart as A2UI when its data has one of them (connector.dart:336-339).
var a2uiOperations = []string{"createSurface", "updateComponents", "updateDataModel", "deleteSurface"}

func isA2UIData(data map[string]any) bool {
	for _, k := range a2uiOperations {
		if _, ok := data[k]; ok {
			return true
		}
	}
	return false
}

// parseA2UIMessage is A2uiMessage.fromJson (messages.dart:13-89): version exactly "v0.9",
// one operation, its body an object with a string surfaceId (and catalogId), components a
// list of objects (cast lazily in Dart, so failing where genui reads them).
func parseA2UIMessage(m map[string]any) error {
	v, ok := m["version"].(string)
	if !ok {
		return errors.New("A2uiValidationError: A2UI message must have a string 'version' field.")
	}
	if v != "v0.9" {
		return fmt.Errorf("A2uiValidationError: A2UI message must have version 'v0.9' (got '%s').", v)
	}
	var present []string
	for _, k := range a2uiOperations {
		if _, ok := m[k]; ok {
			present = append(present, k)
		}
	}
	if len(present) > 1 {
		return fmt.Errorf("A2uiValidationError: A2UI message must contain exactly one of %s; got %s.", strings.Join(a2uiOperations, ", "), strings.Join(present, ", "))
	}
	if len(present) == 0 {
		return errors.New("A2uiValidationError: Unknown A2UI message type.")
	}
	op := present[0]
	body, err := jsonMap(m[op], op)
	if err != nil {
		return err
	}
	if _, err := jsonString(body, "surfaceId", op); err != nil {
		return err
	}
	switch op {
	case "createSurface":
		if _, err := jsonString(body, "catalogId", op); err != nil {
			return err
		}
		if err := jsonOptMap(body, "theme", op); err != nil {
			return err
		}
		return jsonOptBool(body, "sendDataModel", op)
	case "updateComponents":
		l, err := jsonList(body["components"], op+".components")
		if err != nil {
			return err
		}
		for i, c := range l {
			if _, err := jsonMap(c, fmt.Sprintf("%s.components[%d]", op, i)); err != nil {
				return err
			}
		}
	case "updateDataModel":
		return jsonOptString(body, "path", op)
	}
	return nil
}

// --- genui's A2uiTransportAdapter, which reads the connector's text ------------------------

// flutterTextParser is A2uiParserTransformer behind A2uiTransportAdapter.addChunk
// (a2ui_transport_adapter.dart:49-56; a2ui_parser_transformer.dart:55-233), which verdure
// feeds every trimmed text part (ai_provider.dart:87). It pulls fenced or balanced JSON out
// of the text and tries it as A2UI.
type flutterTextParser struct {
	buf      string
	lastA2UI bool
	Texts    []string // text shown
	Parsed   []string // JSON in text that genui renders as A2UI
	Errors   []string // JSON in text that looks like A2UI, but fails: an error on the stream
}

var markdownJSON = regexp.MustCompile("```(?:json)?\\s*([\\s\\S]*?)\\s*```")

func (p *flutterTextParser) addChunk(s string) {
	p.buf += s
	p.process()
}

// Held is text the parser keeps, waiting for the end of JSON it saw begin: not shown.
func (p *flutterTextParser) Held() string { return p.buf }

func (p *flutterTextParser) process() {
	for p.buf != "" {
		if loc := markdownJSON.FindStringSubmatchIndex(p.buf); loc != nil {
			v, err := dartDecode([]byte(p.buf[loc[2]:loc[3]]))
			if err != nil {
				p.emitBefore(loc[0])
				p.emitText(p.buf[loc[0]:loc[1]])
				p.buf = p.buf[loc[1]:]
				continue
			}
			if v != nil {
				p.emitBefore(loc[0])
				p.emitMessage(v)
				p.buf = p.buf[loc[1]:]
				continue
			}
		}
		if end := balancedJSON(p.buf); end > 0 {
			v, err := dartDecode([]byte(p.buf[:end]))
			if err != nil {
				p.emitText(p.buf[:end])
				p.buf = p.buf[end:]
				continue
			}
			if v != nil {
				p.emitMessage(v)
				p.buf = p.buf[end:]
				continue
			}
		}
		first := strings.Index(p.buf, "```")
		if brace := strings.IndexByte(p.buf, '{'); brace != -1 && (first == -1 || brace < first) {
			first = brace
		}
		if first == -1 {
			if p.lastA2UI && dartTrim(p.buf) == "" {
				break
			}
			p.emitText(p.buf)
			p.buf = ""
			break
		}
		if first > 0 {
			prefix := p.buf[:first]
			if p.lastA2UI && dartTrim(prefix) == "" {
				p.buf = p.buf[first:]
				continue
			}
			p.emitText(prefix)
			p.buf = p.buf[first:]
		}
		break
	}
}

func (p *flutterTextParser) emitBefore(i int) {
	if i > 0 {
		p.emitText(p.buf[:i])
	}
}

func (p *flutterTextParser) emitText(s string) {
	p.lastA2UI = false
	s = strings.ReplaceAll(strings.ReplaceAll(s, "<a2ui_message>", ""), "</a2ui_message>", "")
	if s != "" {
		p.Texts = append(p.Texts, s)
	}
}

func (p *flutterTextParser) emitMessage(v any) {
	switch x := v.(type) {
	case map[string]any:
		p.tryEmitOne(x)
	case []any:
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				p.tryEmitOne(m)
			}
		}
	}
}

func (p *flutterTextParser) tryEmitOne(m map[string]any) {
	b, _ := dartEncode(m)
	if parseA2UIMessage(m) == nil {
		p.Parsed = append(p.Parsed, string(b))
		p.lastA2UI = true
		return
	}
	looksLike := false
	for _, k := range append([]string{"version"}, a2uiOperations...) {
		if _, ok := m[k]; ok {
			looksLike = true
		}
	}
	if looksLike {
		p.Errors = append(p.Errors, string(b))
	} else {
		p.Texts = append(p.Texts, string(b))
	}
	p.lastA2UI = false
}

// balancedJSON is _findBalancedJson (a2ui_parser_transformer.dart:260-296): the length of
// the balanced {…} the text starts with, or 0.
func balancedJSON(s string) int {
	if !strings.HasPrefix(s, "{") {
		return 0
	}
	balance, inString, escaped := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{':
			balance++
		case c == '}':
			balance--
			if balance == 0 {
				return i + 1
			}
		}
	}
	return 0
}

// --- What genui's SurfaceController keeps of the surfaces ----------------------------------

type flutterSurface struct {
	catalogID  string
	components map[string]map[string]any
	data       any
}

// flutterSurfaces holds the surfaces the A2UI messages build, as far as this test reads
// them: components by id, the data model. Updates of a surface not created yet are kept, as
// SurfaceController buffers them (surface_controller.dart:337-346).
type flutterSurfaces struct {
	byID    map[string]*flutterSurface
	created []string // createSurface ids, in order
}

func newFlutterSurfaces() *flutterSurfaces {
	return &flutterSurfaces{byID: map[string]*flutterSurface{}}
}

func (s *flutterSurfaces) surface(id string) *flutterSurface {
	if s.byID[id] == nil {
		s.byID[id] = &flutterSurface{components: map[string]map[string]any{}}
	}
	return s.byID[id]
}

// apply applies an A2UI message that parseA2UIMessage accepted.
func (s *flutterSurfaces) apply(m map[string]any) error {
	for _, op := range a2uiOperations {
		body, ok := m[op].(map[string]any)
		if !ok {
			continue
		}
		id := body["surfaceId"].(string)
		switch op {
		case "createSurface":
			if sf := s.byID[id]; sf != nil && sf.catalogID != "" {
				return fmt.Errorf("createSurface of surface %q, which exists", id)
			}
			s.surface(id).catalogID = body["catalogId"].(string)
			s.created = append(s.created, id)
		case "updateComponents":
			sf := s.surface(id)
			for _, c := range body["components"].([]any) {
				cm := c.(map[string]any)
				cid, _ := cm["id"].(string)
				if prev := sf.components[cid]; prev != nil && cm["component"] == nil {
					for k, v := range cm {
						prev[k] = v
					}
					continue
				}
				sf.components[cid] = cm
			}
		case "updateDataModel":
			sf := s.surface(id)
			path, _ := body["path"].(string)
			sf.data = setPointer(sf.data, path, body["value"])
		case "deleteSurface":
			delete(s.byID, id)
		}
	}
	return nil
}

func pointerSegments(path string) []string {
	path = strings.TrimPrefix(path, "/")
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}

func setPointer(root any, path string, value any) any {
	segs := pointerSegments(path)
	if len(segs) == 0 {
		return value
	}
	top, _ := root.(map[string]any)
	if top == nil {
		top = map[string]any{}
	}
	cur := top
	for i, seg := range segs {
		if i == len(segs)-1 {
			cur[seg] = value
			break
		}
		next, _ := cur[seg].(map[string]any)
		if next == nil {
			next = map[string]any{}
			cur[seg] = next
		}
		cur = next
	}
	return top
}

func getPointer(root any, path string) any {
	cur := root
	for _, seg := range pointerSegments(path) {
		m, _ := cur.(map[string]any)
		cur = m[seg]
	}
	return cur
}

// press is the user typing into the surface's text field, then pressing its button: the
// action the Button sends (button.dart:200-221: the event's name, its context resolved
// against the data model), as Surface._dispatchEvent adds the surface id last
// (surface.dart:145-163) and SurfaceController.handleUiEvent wraps it
// (surface_controller.dart:350-362): a UiInteractionPart the connector sends as a DataPart
// without metadata (connector.dart:113-119). Context keys go in sorted order (Dart keeps
// the component's order; these contexts have one key).
func (s *flutterSurfaces) press(t testing.TB, surfaceID, typed string) (part dartObj, action dartObj) {
	t.Helper()
	sf := s.byID[surfaceID]
	if sf == nil {
		t.Fatalf("no surface %q", surfaceID)
	}
	ids := make([]string, 0, len(sf.components))
	for id := range sf.components {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var button map[string]any
	for _, id := range ids {
		c := sf.components[id]
		switch c["component"] {
		case "TextField":
			if v, ok := c["value"].(map[string]any); ok {
				if p, ok := v["path"].(string); ok {
					sf.data = setPointer(sf.data, p, typed)
				}
			}
		case "Button":
			if a, _ := c["action"].(map[string]any); a != nil && a["event"] != nil && button == nil {
				button = c
			}
		}
	}
	if button == nil {
		t.Fatalf("surface %q has no Button with an event action: %s", surfaceID, mustDartEncode(t, sf.components))
	}
	ev := button["action"].(map[string]any)["event"].(map[string]any)
	name, _ := ev["name"].(string)
	def, _ := ev["context"].(map[string]any)
	keys := make([]string, 0, len(def))
	for k := range def {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ctx := dartObj{}
	for _, k := range keys {
		v := def[k]
		if ref, ok := v.(map[string]any); ok {
			p, ok := ref["path"].(string)
			if !ok {
				t.Fatalf("context %q of button %v: only literals and paths are resolved here", k, button["id"])
			}
			if !strings.HasPrefix(p, "/") {
				p = "/" + p
			}
			v = getPointer(sf.data, p)
		}
		ctx = append(ctx, dartKV{k, v})
	}
	action = dartObj{{"name", name}, {"sourceComponentId", button["id"]}, {"timestamp", dartNow()}, {"context", ctx}, {"surfaceId", surfaceID}}
	part = dartObj{{"kind", "data"}, {"metadata", nil}, {"data", dartObj{{"version", "v0.9"}, {"action", action}}}}
	return part, action
}

// --- The connector ------------------------------------------------------------------------

// dartHTTP is what package:http and dart:io make of the connector's requests, by release
// of package:http (genui_a2a asks for ^1.2.1). Setting Request.body (as Client.post does
// with a String body) adds "; charset=utf-8" to a JSON Content-Type up to 1.5.0, and not
// since 1.6.0 (request.dart:18-30, 126-137; CHANGELOG 1.6.0). IOClient keeps the case of
// header names from 1.7.0 (CHANGELOG: "Preserve header cases in IOClient"); before,
// dart:io lowercases them. dart:io adds user-agent and accept-encoding: gzip
// (http_impl.dart: userAgent = _getHttpVersion(); request.headers..add(
// acceptEncodingHeader, "gzip")), and package:http the content-length.
type dartHTTP struct {
	name         string
	charset      bool
	preserveCase bool
}

var (
	dartHTTP15 = dartHTTP{"package:http 1.2.1-1.5", true, false}
	dartHTTP16 = dartHTTP{"package:http 1.6", false, false}
	dartHTTP17 = dartHTTP{"package:http 1.7", false, true}
)

func (h dartHTTP) set(req *http.Request, name, value string) {
	if !h.preserveCase {
		name = strings.ToLower(name)
	}
	req.Header[name] = []string{value}
}

// dartConnector is A2uiAgentConnector(url: …) (connector.dart:40-54) with its A2AClient and
// SseTransport, whose only extra header is X-A2A-Extensions with the v0.9 URI, and what
// verdure wires behind it (ai_provider.dart:71-103): a SurfaceController, and the text
// parser of A2uiTransportAdapter.
type dartConnector struct {
	t         testing.TB
	url       string
	http      dartHTTP
	client    *http.Client
	requestID int // A2AClient._requestId, from 0 (a2a_client.dart:54)

	// What the connector remembers of the last status event (connector.dart:190-191, 226-227).
	taskID, contextID string

	ui        *flutterSurfaces
	text      *flutterTextParser
	validator *a2uitest.Validator

	// keepFailure makes a turn that fails in Flutter end with its Failure set, rather than
	// fail the test.
	keepFailure bool
}

func newDartConnector(t testing.TB, url string, h dartHTTP) *dartConnector {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &dartConnector{t: t, url: url, http: h, client: &http.Client{Transport: tr},
		ui: newFlutterSurfaces(), text: &flutterTextParser{}, validator: a2uitest.New(t, "v0.9", nil)}
}

// newRequest is a request as dart:io sends it, with the headers the Dart code sets.
func (c *dartConnector) newRequest(ctx context.Context, method, url string, body []byte, headers ...dartKV) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return nil, err
	}
	for _, h := range headers {
		v := h.V.(string)
		if http.CanonicalHeaderKey(h.K) == "Content-Type" && c.http.charset {
			v += "; charset=utf-8"
		}
		c.http.set(req, h.K, v)
	}
	// Under their canonical keys, or Go's transport adds its own as well.
	req.Header.Set("User-Agent", dartUserAgent)
	req.Header.Set("Accept-Encoding", "gzip")
	return req, nil
}

// responseBody is the body dart:io hands over: gunzipped (HttpClient.autoUncompress).
func responseBody(res *http.Response) (io.Reader, error) {
	if strings.EqualFold(res.Header.Get("Content-Encoding"), "gzip") {
		return gzip.NewReader(res.Body)
	}
	return res.Body, nil
}

// getAgentCard is A2AClient.getAgentCard (a2a_client.dart:90, 100-105) through
// HttpTransport.get (http_transport.dart:41-61): GET of the string url +
// "/.well-known/agent-card.json", the extension header only, the body decoded as a JSON
// object and parsed as an AgentCard. Verdure awaits it before the first turn
// (ai_provider.dart:103).
func (c *dartConnector) getAgentCard() map[string]any {
	t := c.t
	t.Helper()
	req, err := c.newRequest(context.Background(), http.MethodGet, c.url+"/.well-known/agent-card.json", nil, dartKV{"X-A2A-Extensions", extV09})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.client.Do(req)
	if err != nil {
		t.Fatalf("the card: %v (A2AException.network)", err)
	}
	defer res.Body.Close()
	if res.StatusCode >= 400 {
		t.Fatalf("the card: HTTP %d: Flutter throws A2AHttpException", res.StatusCode)
	}
	r, err := responseBody(res)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	v, err := dartDecode(b)
	if err != nil {
		t.Fatalf("the card: %v\n%s", err, b)
	}
	m, err := jsonMap(v, "card")
	if err != nil {
		t.Fatalf("the card: %v", err)
	}
	if err := parseDartAgentCard(m); err != nil {
		t.Fatalf("AgentCard.fromJson fails: %v\n%s", err, b)
	}
	return m
}

// flutterTurn is what one connectAndSend sent and got.
type flutterTurn struct {
	RequestID int
	MessageID string
	Body      []byte      // the request, as sent
	Header    http.Header // the response's
	Lines     []string    // the SSE lines

	Results []map[string]any // each event's result
	Kinds   []string         // and its kind
	States  []string         // the state of each status (the task's included)
	TaskIDs []string         // and its task

	A2UI       []map[string]any // A2UI messages, as a2ui_core parsed them
	Texts      []string         // trimmed text parts given to the text parser
	Errors     []string         // what went to the connector's error stream
	Ignored    []map[string]any // DataParts without A2UI, which the connector logs and drops
	Dropped    []map[string]any // results without kind, which A2AClient drops
	Artifacts  int              // artifact-update events, parsed and ignored
	FinalState string
	Failure    error // why the turn failed in Flutter (with keepFailure)
}

// A2UIRaw returns the turn's A2UI messages as JSON.
func (tn *flutterTurn) A2UIRaw(t testing.TB) [][]byte {
	out := make([][]byte, len(tn.A2UI))
	for i, m := range tn.A2UI {
		out[i] = mustDartEncode(t, m)
	}
	return out
}

func (tn *flutterTurn) dump() string {
	return strings.Join(tn.Lines, "\n")
}

// connectAndSend is A2uiAgentConnector.connectAndSend (connector.dart:95-277) through
// A2AClient.messageStream (a2a_client.dart:176-235) and SseTransport.sendStream
// (sse_transport.dart:40-90). parts are the message's parts as the connector serialises
// them; capabilities and dataModel go to message.metadata when not nil
// (connector.dart:154-163). onEvent, when set, runs after each event the connector
// handled. A failure of the turn in Flutter fails the test, or with keepFailure ends the
// turn with its Failure.
func (c *dartConnector) connectAndSend(parts []any, capabilities, dataModel any, onEvent func(result map[string]any)) *flutterTurn {
	t := c.t
	t.Helper()
	tn := &flutterTurn{RequestID: c.requestID, MessageID: uuidV4()}
	c.requestID++

	// Message.toJson (message.g.dart:29-39): every field, null when unset. After a turn the
	// connector adds referenceTaskIds [taskId] and contextId, never taskId (connector.dart:146-152).
	var metadata, refs, contextID any
	md := dartObj{}
	if capabilities != nil {
		md = append(md, dartKV{"a2uiClientCapabilities", capabilities})
	}
	if dataModel != nil {
		md = append(md, dartKV{"a2uiClientDataModel", dataModel})
	}
	if len(md) > 0 {
		metadata = md
	}
	if c.taskID != "" {
		refs = []any{c.taskID}
	}
	if c.contextID != "" {
		contextID = c.contextID
	}
	msg := dartObj{{"role", "user"}, {"parts", parts}, {"metadata", metadata}, {"extensions", nil}, {"referenceTaskIds", refs},
		{"messageId", tn.MessageID}, {"taskId", nil}, {"contextId", contextID}, {"kind", "message"}}
	// The message has no extensions: no params.extensions, no header of its own
	// (a2a_client.dart:183-195).
	tn.Body = mustDartEncode(t, dartObj{{"jsonrpc", "2.0"}, {"method", "message/stream"},
		{"params", dartObj{{"configuration", nil}, {"metadata", nil}, {"message", msg}}}, {"id", tn.RequestID}})

	ctx, cancel := context.WithTimeout(context.Background(), flutterTurnTimeout+flutterCloseTimeout)
	defer cancel()
	// sse_transport.dart:55-63.
	req, err := c.newRequest(ctx, http.MethodPost, c.url, tn.Body,
		dartKV{"Content-Type", "application/json"}, dartKV{"Accept", "text/event-stream"}, dartKV{"X-A2A-Extensions", extV09})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.client.Do(req)
	if err != nil {
		t.Fatalf("message/stream: %v (A2AException.network)", err)
	}
	defer res.Body.Close()
	tn.Header = res.Header
	if res.StatusCode >= 400 {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("message/stream: HTTP %d: Flutter throws A2AHttpException: %s", res.StatusCode, b)
	}
	body, err := responseBody(res)
	if err != nil {
		t.Fatal(err)
	}
	c.readStream(tn, body, onEvent)
	return tn
}

type dartLine struct {
	text string
	err  error
}

// dartLines is utf8.decoder then LineSplitter (sse_transport.dart:77-79): lines end at
// "\n", "\r\n" or "\r"; a last line without an end is kept; malformed UTF-8 is an error.
func dartLines(r io.Reader, out chan<- dartLine, done <-chan struct{}) {
	defer close(out)
	emit := func(l dartLine) bool {
		select {
		case out <- l:
			return true
		case <-done:
			return false
		}
	}
	br := bufio.NewReader(r)
	var cur []byte
	line := func() bool {
		s := string(cur)
		cur = cur[:0]
		if !utf8.ValidString(s) {
			return emit(dartLine{err: errors.New("FormatException: malformed UTF-8")})
		}
		return emit(dartLine{text: s})
	}
	afterCR := false
	for {
		b, err := br.ReadByte()
		if err != nil {
			if len(cur) > 0 && !line() {
				return
			}
			if err != io.EOF {
				emit(dartLine{err: err})
			}
			return
		}
		if afterCR {
			afterCR = false
			if b == '\n' {
				continue
			}
		}
		switch b {
		case '\r':
			afterCR = true
			fallthrough
		case '\n':
			if !line() {
				return
			}
		default:
			cur = append(cur, b)
		}
	}
}

// dartSSEParser is SseParser.parse (sse_parser.dart:26-67): data: lines accumulate (the
// text after "data:" trimmed), a blank line ends an event, comments and any other line
// (id:, event:, …) are ignored; the last event is taken even without its blank line.
type dartSSEParser struct{ data []string }

// line reads one line; at the end of an event it returns the event's JSON-RPC response and
// its result (nil for a result Flutter skips), or the exception it throws.
func (p *dartSSEParser) line(l string) (envelope, result map[string]any, err error) {
	switch {
	case strings.HasPrefix(l, "data:"):
		p.data = append(p.data, dartTrim(l[len("data:"):]))
	case strings.HasPrefix(l, ":"):
	case l == "":
		return p.flush()
	}
	return nil, nil, nil
}

func (p *dartSSEParser) flush() (envelope, result map[string]any, err error) {
	if len(p.data) == 0 {
		return nil, nil, nil
	}
	d := strings.Join(p.data, "\n")
	p.data = nil
	return parseDartSSEData(d)
}

// parseDartSSEData is SseParser._parseData (sse_parser.dart:69-100): a JSON object; its
// result, an object (null is skipped); its error, an A2AException; neither, skipped.
func parseDartSSEData(d string) (envelope, result map[string]any, err error) {
	if d == "" {
		return nil, nil, nil
	}
	v, err := dartDecode([]byte(d))
	if err != nil {
		return nil, nil, fmt.Errorf("A2AException.parsing: %v", err)
	}
	env, err := jsonMap(v, "event")
	if err != nil {
		return nil, nil, fmt.Errorf("A2AException.parsing: %v", err)
	}
	if r, ok := env["result"]; ok {
		if r == nil {
			return env, nil, nil
		}
		rm, err := jsonMap(r, "result")
		if err != nil {
			return env, nil, fmt.Errorf("A2AException.parsing: %v", err)
		}
		return env, rm, nil
	}
	if e, ok := env["error"]; ok {
		exc, err := parseDartRPCError(e)
		if err != nil {
			return env, nil, fmt.Errorf("A2AException.parsing: %v", err)
		}
		return env, nil, exc
	}
	return env, nil, nil
}

// finalStates end a turn on the server's side (it marks them final: true); Flutter does
// not read final, and waits for the end of the stream.
var finalStates = map[string]bool{"input-required": true, "completed": true, "canceled": true, "failed": true, "rejected": true, "auth-required": true}

func (c *dartConnector) readStream(tn *flutterTurn, body io.Reader, onEvent func(map[string]any)) {
	t := c.t
	t.Helper()
	lines := make(chan dartLine)
	done := make(chan struct{})
	defer close(done)
	go dartLines(body, lines, done)
	turn := time.NewTimer(flutterTurnTimeout)
	defer turn.Stop()
	var closeBy <-chan time.Time
	var p dartSSEParser
	final := false
	// handle handles an event; false: the turn failed, and Flutter stops reading.
	handle := func(env, result map[string]any, err error) bool {
		t.Helper()
		fail := func(err error) bool {
			t.Helper()
			if !c.keepFailure {
				t.Fatalf("the turn fails in Flutter: %v\n%s", err, tn.dump())
			}
			tn.Failure = err
			return false
		}
		if err != nil {
			return fail(err)
		}
		if env == nil {
			return true
		}
		// A2AClient does not compare ids (sse_parser.dart:79-93); JSON-RPC 2.0 asks for the
		// request's, and the first one of a Dart client is 0.
		if id, ok := env["id"].(json.Number); !ok || string(id) != strconv.Itoa(tn.RequestID) {
			t.Errorf("event id %v, want the request's %d", env["id"], tn.RequestID)
		}
		if result == nil {
			return true
		}
		if final {
			t.Errorf("an event after the final status: %s", mustDartEncode(t, result))
		}
		if err := c.handleResult(tn, result); err != nil {
			return fail(err)
		}
		if k := tn.Kinds[len(tn.Kinds)-1]; (k == "status-update" || k == "task-status-update") && (finalStates[tn.FinalState] || result["final"] == true) {
			final = true
			closeBy = time.After(flutterCloseTimeout)
		}
		if onEvent != nil {
			onEvent(result)
		}
		return true
	}
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				handle(p.flush())
				return
			}
			if l.err != nil {
				t.Fatalf("the stream broke: %v (A2AException.network)\n%s", l.err, tn.dump())
			}
			tn.Lines = append(tn.Lines, l.text)
			if !handle(p.line(l.text)) {
				return
			}
		case <-closeBy:
			t.Fatalf("the stream is still open %v after the final status: Flutter's turn, which ends with the stream, would not end\n%s", flutterCloseTimeout, tn.dump())
		case <-turn.C:
			t.Fatalf("the turn did not end in %v\n%s", flutterTurnTimeout, tn.dump())
		}
	}
}

// handleResult is what A2AClient.messageStream (a2a_client.dart:203-231) and the
// connector's loop (connector.dart:183-261) do with an event's result.
func (c *dartConnector) handleResult(tn *flutterTurn, r map[string]any) error {
	if _, ok := r["error"]; ok {
		// a2a_client.dart:211-214 looks for "error" in the result itself.
		e, err := parseDartRPCError(r["error"])
		if err != nil {
			return err
		}
		return e
	}
	if r["kind"] == nil {
		tn.Dropped = append(tn.Dropped, r) // a2a_client.dart:216
		return nil
	}
	var ev dartTask
	var err error
	kind, isString := r["kind"].(string)
	switch {
	case !isString:
		// Event.fromJson casts it (events.dart:23).
		return castError("result.kind", r["kind"], "String?")
	case kind == "task":
		// A task becomes a status update of its status (a2a_client.dart:217-226).
		ev, err = parseDartTask(r, "result")
	case kind == "status-update" || kind == "task-status-update":
		ev, err = parseDartStatusUpdate(r, "result")
	case kind == "artifact-update":
		if err := parseDartArtifactUpdate(r, "result"); err != nil {
			return err
		}
		tn.Results = append(tn.Results, r)
		tn.Kinds = append(tn.Kinds, kind)
		tn.Artifacts++
		return nil // the connector reads only status updates
	default:
		// Event.fromJson (events.dart:22-34).
		return fmt.Errorf("ArgumentError: Unknown Event kind: %s", kind)
	}
	if err != nil {
		return err
	}
	tn.Results = append(tn.Results, r)
	tn.Kinds = append(tn.Kinds, kind)
	tn.States = append(tn.States, ev.Status.State)
	tn.TaskIDs = append(tn.TaskIDs, ev.ID)
	tn.FinalState = ev.Status.State
	c.taskID, c.contextID = ev.ID, ev.ContextID
	switch ev.Status.State {
	case "failed", "canceled", "rejected":
		// To the error stream, parts skipped (connector.dart:194-206, 230-242).
		tn.Errors = append(tn.Errors, fmt.Sprintf("A2A Error: %s: %s", ev.Status.State, mustDartEncode(c.t, ev.Status.Message)))
		return nil
	}
	if ev.Status.Message == nil {
		return nil
	}
	for _, p := range ev.Status.Parts {
		switch p["kind"] {
		case "data":
			data := p["data"].(map[string]any)
			if !isA2UIData(data) {
				tn.Ignored = append(tn.Ignored, data) // connector.dart:344-346
				continue
			}
			// connector.dart:336-343: an A2UI message that fails here throws out of the turn.
			if err := parseA2UIMessage(data); err != nil {
				return fmt.Errorf("A2uiMessage.fromJson: %v: %s", err, mustDartEncode(c.t, data))
			}
			if err := c.ui.apply(data); err != nil {
				return err
			}
			tn.A2UI = append(tn.A2UI, data)
		case "text":
			if trimmed := dartTrim(p["text"].(string)); trimmed != "" {
				tn.Texts = append(tn.Texts, trimmed)
				c.text.addChunk(trimmed)
			}
		}
	}
	return nil
}

// rpc is a JSON-RPC call through HttpTransport.send (http_transport.dart:64-95):
// Content-Type, then the transport's and the call's headers; the response must be a JSON
// object, the HTTP status below 400. It returns the response, or why Flutter could not
// read it.
func (c *dartConnector) rpc(id int, method string, params any) (env map[string]any, req, resp []byte, err error) {
	req, err = dartEncode(dartObj{{"jsonrpc", "2.0"}, {"method", method}, {"params", params}, {"id", id}})
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), flutterTurnTimeout)
	defer cancel()
	hr, err := c.newRequest(ctx, http.MethodPost, c.url, req, dartKV{"Content-Type", "application/json"}, dartKV{"X-A2A-Extensions", extV09})
	if err != nil {
		return nil, req, nil, err
	}
	res, err := c.client.Do(hr)
	if err != nil {
		return nil, req, nil, fmt.Errorf("%s: %v (A2AException.network)", method, err)
	}
	defer res.Body.Close()
	r, err := responseBody(res)
	if err != nil {
		return nil, req, nil, err
	}
	if resp, err = io.ReadAll(r); err != nil {
		return nil, req, resp, err
	}
	if res.StatusCode >= 400 {
		return nil, req, resp, fmt.Errorf("%s: HTTP %d: A2AHttpException: %s", method, res.StatusCode, resp)
	}
	v, err := dartDecode(resp)
	if err != nil {
		return nil, req, resp, fmt.Errorf("%s: A2AException.parsing: %v: %s", method, err, resp)
	}
	if env, err = jsonMap(v, "response"); err != nil {
		return nil, req, resp, fmt.Errorf("%s: %v", method, err)
	}
	return env, req, resp, nil
}

// taskResult reads a call's result as Task.fromJson (a2a_client.dart:159-162, 298-301), or
// its error as _exceptionFrom makes it (a2a_client.dart:27-45).
func taskResult(env map[string]any) (dartTask, *dartRPCException, error) {
	if e, ok := env["error"]; ok {
		exc, err := parseDartRPCError(e)
		if err != nil {
			return dartTask{}, nil, err
		}
		return dartTask{}, exc, nil
	}
	t, err := parseDartTask(env["result"], "result")
	return t, nil, err
}

// sendEvent is A2uiAgentConnector.sendEvent (connector.dart:283-324) through
// A2AClient.messageSend (a2a_client.dart:138-163): message/send with the action as the
// only part, the connector's contextId and referenceTaskIds [taskId], extensions [v0.9
// URI] in the message and in params, and the header; the result must be a Task. event has
// the keys the connector reads: action (the name), sourceComponentId, context, surfaceId.
func (c *dartConnector) sendEvent(event dartObj) (dartTask, []byte) {
	t := c.t
	t.Helper()
	if c.taskID == "" {
		t.Fatal("sendEvent without a task: the connector logs and sends nothing")
	}
	get := func(k string) any {
		for _, kv := range event {
			if kv.K == k {
				return kv.V
			}
		}
		return nil
	}
	action := dartObj{{"name", get("action")}, {"sourceComponentId", get("sourceComponentId")}, {"timestamp", dartNow()}, {"context", get("context")}}
	if sid := get("surfaceId"); sid != nil {
		action = append(action, dartKV{"surfaceId", sid})
	}
	var contextID any
	if c.contextID != "" {
		contextID = c.contextID
	}
	msg := dartObj{{"role", "user"}, {"parts", []any{dartObj{{"kind", "data"}, {"metadata", nil}, {"data", dartObj{{"version", "v0.9"}, {"action", action}}}}}},
		{"metadata", nil}, {"extensions", []any{extV09}}, {"referenceTaskIds", []any{c.taskID}}, {"messageId", uuidV4()},
		{"taskId", nil}, {"contextId", contextID}, {"kind", "message"}}
	id := c.requestID
	c.requestID++
	env, body, _, err := c.rpc(id, "message/send", dartObj{{"message", msg}, {"extensions", []any{extV09}}})
	if err != nil {
		t.Fatalf("sendEvent: %v", err)
	}
	checkRPCID(t, env, id)
	task, exc, err := taskResult(env)
	if err != nil {
		t.Fatalf("sendEvent: Task.fromJson fails: %v\n%s", err, mustDartEncode(t, env))
	}
	if exc != nil {
		t.Fatalf("sendEvent: %v", exc)
	}
	return task, body
}

// cancelTask is A2AClient.cancelTask (a2a_client.dart:289-302), which the connector calls
// with its taskId when the app's CancellationSignal fires (connector.dart:101-105).
func (c *dartConnector) cancelTask(id int, taskID string) (dartTask, *dartRPCException, error) {
	env, _, resp, err := c.rpc(id, "tasks/cancel", dartObj{{"id", taskID}})
	if err != nil {
		return dartTask{}, nil, err
	}
	if got, ok := env["id"].(json.Number); !ok || string(got) != strconv.Itoa(id) {
		return dartTask{}, nil, fmt.Errorf("tasks/cancel: response id %v, want %d", env["id"], id)
	}
	task, exc, err := taskResult(env)
	if err != nil {
		return task, nil, fmt.Errorf("tasks/cancel: %v\n%s", err, resp)
	}
	return task, exc, nil
}

func (c *dartConnector) nextID() int {
	id := c.requestID
	c.requestID++
	return id
}

func checkRPCID(t testing.TB, env map[string]any, id int) {
	t.Helper()
	if got, ok := env["id"].(json.Number); !ok || string(got) != strconv.Itoa(id) {
		t.Errorf("response id %v, want the request's %d", env["id"], id)
	}
}

func dartTextPart(s string) dartObj {
	// TextPart.toJson (part.g.dart:17-21; part.dart:67).
	return dartObj{{"kind", "text"}, {"metadata", nil}, {"text", s}}
}

// checkFlutterTurn checks what every turn of these tests must give Flutter: the task
// first, then status updates; nothing dropped or ignored; the final state; every A2UI
// message valid against the specification; no text the text parser would take for A2UI or
// hold back.
func (c *dartConnector) checkFlutterTurn(tn *flutterTurn, wantFinal string) {
	t := c.t
	t.Helper()
	if len(tn.Kinds) < 2 || tn.Kinds[0] != "task" {
		t.Errorf("the stream does not start with the task: %v\n%s", tn.Kinds, tn.dump())
	}
	for i, k := range tn.Kinds[1:] {
		if k != "status-update" {
			t.Errorf("event %d: kind %q", i+1, k)
		}
	}
	if len(tn.Dropped) > 0 {
		t.Errorf("results without kind, which Flutter drops: %s", mustDartEncode(t, tn.Dropped))
	}
	if len(tn.Ignored) > 0 {
		t.Errorf("DataParts without A2UI, which Flutter ignores: %s", mustDartEncode(t, tn.Ignored))
	}
	if tn.FinalState != wantFinal {
		t.Errorf("final state %q, want %q\n%s", tn.FinalState, wantFinal, tn.dump())
	}
	for _, id := range tn.TaskIDs[1:] {
		if id != tn.TaskIDs[0] {
			t.Errorf("the events name tasks %v", tn.TaskIDs)
			break
		}
	}
	c.validator.CheckAll(t, tn.A2UIRaw(t)...)
	if len(c.text.Parsed) > 0 || len(c.text.Errors) > 0 {
		t.Errorf("text parts hold JSON that genui's text parser takes for A2UI: parsed %q, failed %q", c.text.Parsed, c.text.Errors)
	}
	if h := c.text.Held(); h != "" {
		t.Errorf("genui's text parser holds back %q, waiting for the end of JSON", h)
	}
	t.Logf("request %d: %d events, %d A2UI DataParts, texts %q, final %s", tn.RequestID, len(tn.Results), len(tn.A2UI), tn.Texts, tn.FinalState)
}

func opsOf(msgs []map[string]any, op string) []map[string]any {
	var out []map[string]any
	for _, m := range msgs {
		if b, ok := m[op].(map[string]any); ok {
			out = append(out, b)
		}
	}
	return out
}

// --- The tests ----------------------------------------------------------------------------

// A session of Flutter's example app (verdure): the card, a text turn, the user's action on
// the surface it made, the older sendEvent, then a cancellation. The connector's url is the
// server's bare origin as in verdure (JSON-RPC at POST /), or the card's url (/a2a).
func TestFlutterGenuiA2ASession(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		http       dartHTTP
	}{
		{"verdure origin, " + dartHTTP17.name, "", dartHTTP17},
		{"/a2a, " + dartHTTP15.name, "/a2a", dartHTTP15},
		{"/a2a, " + dartHTTP16.name, "/a2a", dartHTTP16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := newAgent(t, offline.Name, nil)
			c := newDartConnector(t, srv.URL+tc.path, tc.http)

			card := c.getAgentCard()
			if caps, _ := card["capabilities"].(map[string]any); caps["streaming"] != true {
				t.Errorf("the card does not offer streaming: %s", mustDartEncode(t, card))
			}

			// A text turn, as verdure sends it: no capabilities, no metadata.
			first := c.connectAndSend([]any{dartTextPart("Book a table for two")}, nil, nil, nil)
			want := `{"jsonrpc":"2.0","method":"message/stream","params":{"configuration":null,"metadata":null,"message":{"role":"user",` +
				`"parts":[{"kind":"text","metadata":null,"text":"Book a table for two"}],"metadata":null,"extensions":null,"referenceTaskIds":null,` +
				`"messageId":"` + first.MessageID + `","taskId":null,"contextId":null,"kind":"message"}},"id":0}`
			if string(first.Body) != want {
				t.Fatalf("the request:\n%s\nwant\n%s", first.Body, want)
			}
			c.checkFlutterTurn(first, "input-required")
			created := opsOf(first.A2UI, "createSurface")
			if len(created) != 1 || created[0]["catalogId"] != flutterCatalogID {
				t.Fatalf("createSurface for Flutter without capabilities: %s (want catalogId %s)", mustDartEncode(t, created), flutterCatalogID)
			}
			if len(first.A2UI) < 3 || len(first.Texts) == 0 {
				t.Fatalf("the turn: %d A2UI messages, texts %q", len(first.A2UI), first.Texts)
			}
			taskID, contextID := c.taskID, c.contextID
			if taskID != first.TaskIDs[0] || contextID == "" {
				t.Fatalf("the connector keeps task %q context %q", taskID, contextID)
			}
			surfaceID := created[0]["surfaceId"].(string)

			// The user's action on that surface: the only part, a DataPart without metadata; the
			// message names the context and the task as referenceTaskIds, never as taskId.
			part, action := c.ui.press(t, surfaceID, "Friday 7pm")
			second := c.connectAndSend([]any{part}, nil, nil, nil)
			want = `{"jsonrpc":"2.0","method":"message/stream","params":{"configuration":null,"metadata":null,"message":{"role":"user",` +
				`"parts":[{"kind":"data","metadata":null,"data":{"version":"v0.9","action":{"name":"send","sourceComponentId":"send",` +
				`"timestamp":"` + action[2].V.(string) + `","context":{"reply":"Friday 7pm"},"surfaceId":"` + surfaceID + `"}}}],` +
				`"metadata":null,"extensions":null,"referenceTaskIds":["` + taskID + `"],"messageId":"` + second.MessageID + `",` +
				`"taskId":null,"contextId":"` + contextID + `","kind":"message"}},"id":1}`
			if string(second.Body) != want {
				t.Fatalf("the request:\n%s\nwant\n%s", second.Body, want)
			}
			c.checkFlutterTurn(second, "input-required")
			if second.TaskIDs[0] == taskID || c.contextID != contextID {
				t.Errorf("the action's turn: task %s (first %s), context %s (first %s)", second.TaskIDs[0], taskID, c.contextID, contextID)
			}
			if n := len(opsOf(second.A2UI, "createSurface")); n != 0 || len(second.A2UI) == 0 {
				t.Fatalf("the action's turn: %d createSurface in %s", n, mustDartEncode(t, second.A2UI))
			}
			for _, m := range second.A2UI {
				for _, op := range a2uiOperations {
					if b, ok := m[op].(map[string]any); ok && b["surfaceId"] != surfaceID {
						t.Errorf("the action's turn touches surface %v, not %s", b["surfaceId"], surfaceID)
					}
				}
			}
			if msg := c.ui.byID[surfaceID].components["message"]; msg == nil || !strings.Contains(fmt.Sprint(msg["text"]), `You sent "send" with {"reply":"Friday 7pm"}.`) {
				t.Errorf("the surface after the action: %s", mustDartEncode(t, c.ui.byID[surfaceID].components))
			}

			// The older sendEvent: message/send, a Task back; the connector keeps its task.
			task, body := c.sendEvent(dartObj{{"action", "send"}, {"sourceComponentId", "send"}, {"context", dartObj{{"reply", "Saturday"}}}, {"surfaceId", surfaceID}})
			for _, s := range []string{`"method":"message/send"`, `"extensions":["` + extV09 + `"],"referenceTaskIds":["` + c.taskID + `"]`,
				`"contextId":"` + contextID + `","kind":"message"},"extensions":["` + extV09 + `"]},"id":2}`} {
				if !bytes.Contains(body, []byte(s)) {
					t.Errorf("sendEvent's request lacks %s:\n%s", s, body)
				}
			}
			if task.ContextID != contextID || task.ID == c.taskID || task.Status.State != "input-required" {
				t.Errorf("sendEvent's task: %+v", task)
			}

			// Cancellation: tasks/cancel {"id": the connector's taskId}, a Task back; a second
			// one is an A2AException Flutter can read.
			ct, exc, err := c.cancelTask(c.nextID(), c.taskID)
			if err != nil || exc != nil {
				t.Fatalf("tasks/cancel: %v %v", err, exc)
			}
			if ct.ID != c.taskID || ct.Status.State != "canceled" {
				t.Errorf("the canceled task: %+v", ct)
			}
		})
	}
}

// A turn with the capabilities genui sends when the app passes them
// (A2UiClientCapabilities.toJson, a2ui_client_capabilities.dart:90-96): the surface
// names Flutter's catalog id.
func TestFlutterGenuiA2ACapabilities(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	c := newDartConnector(t, srv.URL+"/a2a", dartHTTP16)
	c.getAgentCard()
	caps := dartObj{{"v0.9", dartObj{{"supportedCatalogIds", []any{flutterCatalogID}}}}}
	tn := c.connectAndSend([]any{dartTextPart("Show me a form to report a bug")}, caps, nil, nil)
	if want := `"metadata":{"a2uiClientCapabilities":{"v0.9":{"supportedCatalogIds":["` + flutterCatalogID + `"]}}},"extensions":null`; !bytes.Contains(tn.Body, []byte(want)) {
		t.Fatalf("the request lacks %s:\n%s", want, tn.Body)
	}
	c.checkFlutterTurn(tn, "input-required")
	created := opsOf(tn.A2UI, "createSurface")
	if len(created) != 1 || created[0]["catalogId"] != flutterCatalogID {
		t.Fatalf("createSurface: %s", mustDartEncode(t, created))
	}
}

// Errors as genui_a2a reads them: a JSON-RPC error becomes the A2AException of its code
// (a2a_client.dart:27-45 for calls; sse_parser.dart:86-92 for an error event, which ends
// the turn), provided its code is an int, its message a string and its data an object or
// absent.
func TestFlutterGenuiA2AErrors(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	t.Run("an error event of message/stream", func(t *testing.T) {
		// An app whose catalog the server does not know, passing the controller's capabilities.
		c := newDartConnector(t, srv.URL, dartHTTP16)
		c.keepFailure = true
		caps := dartObj{{"v0.9", dartObj{{"supportedCatalogIds", []any{"urn:example:catalog"}}}}}
		tn := c.connectAndSend([]any{dartTextPart("Hello")}, caps, nil, nil)
		var exc *dartRPCException
		if !errors.As(tn.Failure, &exc) || exc.Code != -32602 || !strings.Contains(exc.Message, "a2uiClientCapabilities") {
			t.Fatalf("the turn fails with %v, want the A2AException of -32602 naming the capabilities\n%s", tn.Failure, tn.dump())
		}
	})
	t.Run("tasks/cancel", func(t *testing.T) {
		c := newDartConnector(t, srv.URL, dartHTTP16)
		c.connectAndSend([]any{dartTextPart("Hello")}, nil, nil, nil)
		if _, exc, err := c.cancelTask(c.nextID(), c.taskID); err != nil || exc != nil {
			t.Fatalf("tasks/cancel: %v %v", err, exc)
		}
		// Again: the task cannot be canceled (A2ATaskNotCancelableException); an unknown task
		// is not found (A2ATaskNotFoundException).
		for _, tc := range []struct {
			id   string
			code int64
		}{{c.taskID, -32002}, {"nope", -32001}} {
			_, exc, err := c.cancelTask(c.nextID(), tc.id)
			if err != nil || exc == nil || exc.Code != tc.code {
				t.Errorf("tasks/cancel of %s: %v %v, want code %d", tc.id, err, exc, tc.code)
			}
		}
	})
}

// The app cancels a running turn: its CancellationSignal makes the connector call
// tasks/cancel with the task the stream named (connector.dart:101-105), without awaiting
// it. The stream ends canceled (to the error stream, parts skipped) and closes; the call
// returns the canceled Task.
func TestFlutterGenuiA2ACancelRunningTurn(t *testing.T) {
	fake := fakegemini.New(fakegemini.WithPacing(200 * time.Millisecond))
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "k")
	srv, _ := newAgent(t, "googleai/gemini-2.5-flash", nil)
	fake.Enqueue(fakegemini.Reply{Chunks: fakegemini.TextChunks(formResponse, 20)})
	c := newDartConnector(t, srv.URL, dartHTTP16)
	c.getAgentCard()
	type cancelResult struct {
		task dartTask
		exc  *dartRPCException
		err  error
	}
	var canceled chan cancelResult
	var canceledID string
	tn := c.connectAndSend([]any{dartTextPart("a form")}, nil, nil, func(map[string]any) {
		if canceled != nil {
			return
		}
		canceled = make(chan cancelResult, 1)
		id, taskID := c.nextID(), c.taskID
		canceledID = taskID
		go func() {
			// Once the model runs, so that the cancellation stops a running turn.
			if err := fake.WaitRequests(t.Context(), 1); err != nil {
				canceled <- cancelResult{err: err}
				return
			}
			task, exc, err := c.cancelTask(id, taskID)
			canceled <- cancelResult{task, exc, err}
		}()
	})
	if canceled == nil {
		t.Fatal("no event")
	}
	var r cancelResult
	select {
	case r = <-canceled:
	case <-time.After(flutterTurnTimeout):
		t.Fatal("tasks/cancel did not return")
	}
	if r.err != nil || r.exc != nil || r.task.ID != canceledID || r.task.Status.State != "canceled" {
		t.Fatalf("tasks/cancel: %+v", r)
	}
	if tn.FinalState != "canceled" || len(tn.Errors) != 1 {
		t.Fatalf("the canceled turn: final %s, errors %q\n%s", tn.FinalState, tn.Errors, tn.dump())
	}
	if len(tn.Dropped) > 0 || len(tn.Ignored) > 0 {
		t.Errorf("dropped %s, ignored %s", mustDartEncode(t, tn.Dropped), mustDartEncode(t, tn.Ignored))
	}
	c.validator.CheckAll(t, tn.A2UIRaw(t)...)
	if len(c.text.Parsed) > 0 || len(c.text.Errors) > 0 {
		t.Errorf("text parts hold JSON that genui's text parser takes for A2UI: parsed %q, failed %q", c.text.Parsed, c.text.Errors)
	}
}

// The Go ports of the Dart parsers above, on input the server does not send.
func TestFlutterDartPorts(t *testing.T) {
	// LineSplitter and SseParser: \r\n, \r and \n; data: lines joined with \n; comments, id:
	// and event: ignored; a null result skipped; the last event taken without its blank line.
	in := "data: {\"jsonrpc\":\"2.0\",\"id\":0,\r\ndata:\"result\":{\"kind\":\"status-update\"}}\r\n\r\n" +
		": keep-alive\rid: 1\revent: message\rdata: {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":null}\r\r" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"kind\":\"task\"}}"
	lines := make(chan dartLine)
	done := make(chan struct{})
	defer close(done)
	go dartLines(strings.NewReader(in), lines, done)
	var p dartSSEParser
	var kinds []any
	for l := range lines {
		_, r, err := p.line(l.text)
		if err != nil {
			t.Fatal(err)
		}
		if r != nil {
			kinds = append(kinds, r["kind"])
		}
	}
	if _, r, err := p.flush(); err != nil || r == nil {
		t.Fatalf("the last event: %v %v", r, err)
	} else {
		kinds = append(kinds, r["kind"])
	}
	if fmt.Sprint(kinds) != "[status-update task]" {
		t.Fatalf("events %v", kinds)
	}
	for _, tc := range []struct {
		data string
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":0,"error":{"code":-32001,"message":"gone"}}`, false},
		{`{"jsonrpc":"2.0","id":0,"error":{"code":-32001,"message":"gone","data":[1]}}`, false},
		{`{"jsonrpc":"2.0","id":0,"result":[1]}`, false},
		{`[1]`, false},
		{`{"jsonrpc":"2.0","id":0}`, true},
	} {
		_, _, err := parseDartSSEData(tc.data)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.data, err)
		}
	}
	var exc *dartRPCException
	if _, _, err := parseDartSSEData(`{"jsonrpc":"2.0","id":0,"error":{"code":-32001,"message":"gone"}}`); !errors.As(err, &exc) || exc.Code != -32001 {
		t.Errorf("an error event: %v", err)
	}

	// A2uiMessage.fromJson.
	for _, tc := range []struct {
		msg string
		ok  bool
	}{
		{`{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"c"}}`, true},
		{`{"version":"v0.9.1","createSurface":{"surfaceId":"s","catalogId":"c"}}`, false},
		{`{"createSurface":{"surfaceId":"s","catalogId":"c"}}`, false},
		{`{"version":"v0.9","createSurface":{"surfaceId":"s"}}`, false},
		{`{"version":"v0.9","deleteSurface":{"surfaceId":"s"},"updateDataModel":{"surfaceId":"s"}}`, false},
		{`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[1]}}`, false},
		{`{"version":"v0.9","updateDataModel":{"surfaceId":"s","path":"/a","value":[1]}}`, true},
	} {
		v, _ := dartDecode([]byte(tc.msg))
		if err := parseA2UIMessage(v.(map[string]any)); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.msg, err)
		}
	}

	// Part and event kinds.
	for _, tc := range []struct {
		result string
		ok     bool
	}{
		{`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working","message":{"role":"agent","messageId":"m","parts":[{"kind":"data","data":{"a":1}}]}}}`, true},
		{`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}`, false},
		{`{"kind":"status-update","taskId":"t","status":{"state":"working"}}`, false},
		{`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working","message":{"role":"agent","messageId":"m","parts":[{"kind":"data","data":[1]}]}}}`, false},
		{`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working","message":{"role":"agent","messageId":"m","parts":[{"text":"x"}]}}}`, false},
		{`{"kind":"message","role":"agent","messageId":"m","parts":[]}`, false},
		{`{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[]}}`, false},
		{`{"kind":"task","id":"t","contextId":"c","status":{"state":"submitted"},"history":[{"role":"user","parts":[]}]}`, false},
	} {
		v, _ := dartDecode([]byte(tc.result))
		c := &dartConnector{t: t, ui: newFlutterSurfaces(), text: &flutterTextParser{}}
		if err := c.handleResult(&flutterTurn{}, v.(map[string]any)); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.result, err)
		}
	}

	// The text parser: fenced A2UI is parsed, other JSON shown as text, an open brace held.
	var tp flutterTextParser
	tp.addChunk("Here you go ```json\n{\"version\":\"v0.9\",\"deleteSurface\":{\"surfaceId\":\"s\"}}\n```")
	tp.addChunk(`{"a":1}`)
	tp.addChunk("Price {")
	if len(tp.Parsed) != 1 || fmt.Sprint(tp.Texts) != `[Here you go  {"a":1} Price ]` || tp.Held() != "{" {
		t.Errorf("parsed %q, texts %q, held %q", tp.Parsed, tp.Texts, tp.Held())
	}

	// The requests' JSON: Dart's key order, nulls kept, no HTML escaping.
	if got := string(mustDartEncode(t, dartObj{{"b", nil}, {"a", []any{dartObj{{"z", "<&>"}}}}})); got != `{"b":null,"a":[{"z":"<&>"}]}` {
		t.Errorf("dartEncode: %s", got)
	}
	if ts := dartNow(); !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(\d{3})?$`).MatchString(ts) {
		t.Errorf("timestamp %s", ts)
	}
}
