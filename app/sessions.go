package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"cairn"
	"cairn/auth"
	"cairn/store"
)

// SessionLife is how long a session lasts at most (the web interface's
// sign-in).
const SessionLife = 12 * time.Hour

// sessionName names the tokens SignIn makes, in token lists; linkName
// the one-time tokens of sign-in links.
const (
	sessionName = "web-session"
	linkName    = "sign-in-link"
)

// LinkLife is how long a sign-in link works, if nobody uses it.
const LinkLife = 15 * time.Minute

// SignInLink makes a one-time sign-in token for the principal in ctx,
// with scopes: it lasts LinkLife, and signing in with it (SignIn) revokes
// it, so that it works once. cairn serve prints a link holding it for the
// vault's owner.
func (a *App) SignInLink(ctx context.Context, scopes []auth.Scope) (*NewToken, error) {
	p, err := Principal(ctx)
	if err != nil {
		return nil, err
	}
	return a.CreateToken(ctx, TokenRequest{Name: linkName, Principal: p, Scopes: scopes, Expires: fmt.Sprintf("%dm", int(LinkLife/time.Minute))})
}

// SignIn authenticates the token secret and makes a session for it: a
// token of the same principal and scopes, named web-session.<id of the
// token signed in with> (auth.SessionPrefix), that lasts SessionLife or
// until that token expires, whichever comes first, and works only while
// it does (the authorizer checks); its secret is the session's key. A
// session never outlives, nor widens, the token it came from, and SignOut
// (or cairn token revoke of either) ends it. A sign-in link's token is
// spent by its first sign-in, and its session, named web-session, stands
// alone for SessionLife. A secret that is not an active token's is
// EUNAUTHORIZED.
func (a *App) SignIn(ctx context.Context, secret string) (*NewToken, error) {
	t, err := a.authorizer.Authenticate(ctx, secret)
	if cairn.ErrorCode(err) == cairn.EUNAUTHORIZED {
		return nil, cairn.Errorf(cairn.EUNAUTHORIZED, "%s", strings.Replace(err.Error(), "the bearer token", "this token", 1)).
			WithHint("Sign in with a token made with cairn token create --scope read (add review to decide on proposals).")
	}
	if err != nil {
		return nil, err
	}
	life, name := SessionLife, auth.SessionPrefix+t.Root()
	if t.Name == linkName {
		// A link works once: the first sign-in spends it (of two at once,
		// one), and the session stands on its own.
		var spent bool
		err := a.v.Store.Update(ctx, func(tx *store.Tx) error {
			var err error
			spent, err = a.tokens.SpendToken(ctx, tx.Backend(), t.ID, a.now())
			return err
		})
		if err != nil {
			return nil, a.v.ExplainBusy(err)
		}
		a.authorizer.Forget(t.ID)
		if !spent {
			return nil, cairn.Errorf(cairn.EUNAUTHORIZED, "this sign-in link was used already").
				WithHint("Sign in with a token, or restart cairn serve for a new link.")
		}
		name = sessionName
	} else if !t.Expires.IsZero() {
		life = min(life, t.Expires.Sub(a.now()))
	}
	if life < time.Minute {
		return nil, cairn.Errorf(cairn.EUNAUTHORIZED, "token %s expires in less than a minute", t.ID).
			WithHint("Sign in with a token that lasts: cairn token create --scope read")
	}
	return a.CreateToken(auth.NewContext(ctx, t), TokenRequest{
		Name: name, Principal: t.Principal, Scopes: t.Scopes,
		Expires: fmt.Sprintf("%dm", int(life/time.Minute)),
	})
}

// IsSignInLink reports whether secret is a sign-in link's token that
// still works (so that a page offers it as one, and no other token).
func (a *App) IsSignInLink(ctx context.Context, secret string) bool {
	t, err := a.authorizer.Authenticate(ctx, secret)
	return err == nil && t.Name == linkName
}

// SignOut ends the session whose key is secret: its token is revoked. A
// session that has ended already is no error; a secret that is not a
// session's is EUNAUTHORIZED, changing nothing.
func (a *App) SignOut(ctx context.Context, secret string) error {
	t, err := a.authorizer.Authenticate(ctx, secret)
	if cairn.ErrorCode(err) == cairn.EUNAUTHORIZED {
		return nil // expired or revoked: ended
	}
	if err != nil {
		return err
	}
	if t.Name != sessionName && t.Parent() == "" {
		return cairn.Errorf(cairn.EUNAUTHORIZED, "token %s is not a session", t.ID).
			WithHint("Revoke a token with cairn token revoke ID.")
	}
	_, err = a.RevokeToken(auth.NewContext(ctx, t), t.ID)
	return err
}
