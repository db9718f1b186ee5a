package operator

import (
	"fmt"

	"github.com/go-logr/logr"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
)

// restyLogger sends the Linode client's own messages (resty's retry warnings and request errors)
// to the controller's structured log at debug level, with the token redacted. By default they go
// to stderr as free text, beside the JSON logs; and the callers already log each failure with
// its context, so at info level they would only repeat it.
type restyLogger struct {
	log         logr.Logger
	credentials *linode.Credentials
}

func (l restyLogger) Errorf(format string, v ...any) { l.write(format, v) }
func (l restyLogger) Warnf(format string, v ...any)  { l.write(format, v) }
func (l restyLogger) Debugf(format string, v ...any) { l.write(format, v) }

func (l restyLogger) write(format string, v []any) {
	l.log.V(1).Info(l.credentials.Redact(fmt.Sprintf(format, v...)))
}
