package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/drain"
	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/refusal"
	"github.com/shufflenode/shufflenode/reports"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// Handle serves one request frame from a peer (it is the cluster's
// dht.Handler). It replies Ack, Busy, or Refused with a code the sender acts
// on.
func (s *Service) Handle(ctx context.Context, from member.Member, req wire.Frame) (wire.Type, []byte) {
	if err := s.attached(ctx); err != nil {
		return wire.TypeBusy, wire.EncodeBusy(10 * time.Millisecond)
	}
	var reply []byte
	var err error
	switch req.Type {
	case wire.TypeShards:
		err = s.recv.HandlePayload(ctx, req.Payload)
	case wire.TypeControl:
		reply, err = s.handleControl(ctx, from, req.Payload)
	case drain.TypeHandOver:
		err = s.drain.HandleFrame(ctx, req.Payload)
	default:
		err = shuffle.Refuse(wire.RefuseUnsupported, fmt.Errorf("frame type %d", req.Type))
	}
	var b *shuffle.Busy
	if errors.As(err, &b) {
		return wire.TypeBusy, wire.EncodeBusy(b.After)
	}
	if err != nil {
		s.log.Debug("request refused", "peer", from.Name, "type", req.Type, "err", err)
		return wire.TypeRefused, wire.EncodeRefusal(wire.Refusal{Code: refusal.Code(err), Reason: err.Error()})
	}
	return wire.TypeAck, reply
}

func (s *Service) handleControl(ctx context.Context, from member.Member, b []byte) ([]byte, error) {
	c, err := control.Decode(b)
	if err != nil {
		return nil, shuffle.Refuse(wire.RefuseBadRequest, err)
	}
	if err := control.CheckAuthor(from.Name, c); err != nil {
		err = shuffle.Refuse(wire.RefuseBadRequest, err)
		s.log.Warn("control message refused", "peer", from.Name, "shuffle", c.Shuffle, "op", c.Op, "err", err)
		return nil, err
	}
	if c.Op == control.OpCreate {
		return nil, s.install(c)
	}
	if c.Op == control.OpClose {
		return nil, s.closeFrom(c)
	}
	if c.Op == control.OpPing {
		return nil, nil // the answer is the reply itself (package failover)
	}
	if c.Op == control.OpCheck {
		r, err := s.answerCheck(c)
		if err != nil {
			return nil, err
		}
		return json.Marshal(r)
	}
	sh, err := s.lookup(c.Shuffle)
	if errors.Is(err, ErrUnknownShuffle) {
		sh, err = s.adopt(ctx, c)
	}
	if err != nil {
		return nil, err
	}
	sh.Touch()
	if c.Op == control.OpRestarted {
		r, err := s.fo.Restarted(sh.Shuffle, c, from.Name)
		if err != nil {
			return nil, err
		}
		return json.Marshal(r)
	}
	r, err := s.dispatch(sh, c)
	if err != nil {
		s.fo.DropIfLost(sh.ID(), err)
		return nil, err
	}
	return json.Marshal(r)
}

// dispatch runs a control operation on a known shuffle.
func (s *Service) dispatch(sh *entry, c *control.Msg) (control.Reply, error) {
	switch c.Op {
	case control.OpBegin, control.OpDone, control.OpCommitted, control.OpBarrier, control.OpTasks:
		co, err := s.coordOf(sh)
		if err != nil {
			return control.Reply{}, err
		}
		return s.toCoordinator(co, c)
	case control.OpHandOver, control.OpHandedOver, control.OpAbort:
		co, err := s.coordOf(sh)
		if err != nil {
			return control.Reply{}, err
		}
		if c.Op == control.OpAbort {
			return control.Reply{}, s.coord.AbortFrom(co, c)
		}
		return s.drain.Answer(s.ctx, sh.State, co, c)
	case control.OpEpoch:
		return control.Reply{}, s.coord.ApplyEpoch(sh.State, c)
	case control.OpTakeover:
		return s.fo.ApplyTakeover(sh.Shuffle, c)
	case control.OpSeal:
		if err := sh.CheckSeal(c.Node, c.Term, c.Epoch); err != nil {
			return control.Reply{}, err
		}
		sh.Finish(Sealed, nil)
		return control.Reply{}, nil
	case control.OpFail:
		if err := sh.CheckDecision(c.Op, c.Node, c.Term); err != nil {
			return control.Reply{}, err
		}
		sh.Finish(Failed, coordinator.FailureOf(c))
		s.split.Forget(sh.ID())
		return control.Reply{}, nil
	}
	return control.Reply{}, shuffle.Refuse(wire.RefuseUnsupported, fmt.Errorf("control op %q", c.Op))
}

// toCoordinator hands a report or a barrier poll to this node's coordinator.
func (s *Service) toCoordinator(co *coordinator.Shuffle, c *control.Msg) (control.Reply, error) {
	switch c.Op {
	case control.OpBegin:
		return s.coord.Begin(co, c)
	case control.OpBarrier:
		return s.coord.Status(co)
	case control.OpTasks:
		return reports.AnswerTasks(s.coord, co, c, func(err error) wire.RefusalCode {
			s.fo.DropIfLost(c.Shuffle, err)
			return refusal.Code(err)
		}), nil
	case control.OpCommitted:
		if len(c.Commits) > 0 {
			return control.Reply{}, reports.ReportCommits(s.coord, co, c)
		}
	}
	return control.Reply{}, s.coord.Report(co, c)
}
