package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// serveTCPRelay is the child that relays every TCP connection to
// upstream's host byte for byte, until it is signalled: the least a proxy
// process can do (io.Copy between TCP connections splices on Linux, so its
// bytes never enter the process). The echo through it is a reference: what
// a process hop alone adds to a round trip on this machine, under which no
// proxy, recording or not, can go.
func serveTCPRelay(upstream string) error {
	u, err := url.Parse(upstream)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println("http://" + ln.Addr().String())
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
		<-sig
		ln.Close()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		wg.Go(func() { relayTCP(c.(*net.TCPConn), u.Host) })
	}
}

// relayTCP relays c to a new connection to host in both directions until
// both have ended.
func relayTCP(c *net.TCPConn, host string) {
	defer c.Close()
	up, err := net.Dial("tcp", host)
	if err != nil {
		return
	}
	s := up.(*net.TCPConn)
	defer s.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(s, c)
		s.CloseWrite()
	}()
	io.Copy(c, s)
	c.CloseWrite()
	<-done
}
