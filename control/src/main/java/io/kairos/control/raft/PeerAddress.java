package io.kairos.control.raft;

import java.util.ArrayList;
import java.util.List;

/**
 * One replica of the group: where its HTTP API and its Raft transport listen. Written on the
 * command line as {@code host:httpPort} (the Raft port is then {@code httpPort + 1000}) or {@code
 * host:httpPort:raftPort}. Peers dial the Raft transport at {@code raftHost:raftPort}, which is the
 * API's host unless a single replica was given {@code --raft-listen}.
 */
public record PeerAddress(String host, int httpPort, int raftPort, String raftHost) {
  public static final int RAFT_PORT_OFFSET = 1000;

  public PeerAddress {
    if (host == null || host.isBlank() || raftHost == null || raftHost.isBlank()) {
      throw new IllegalArgumentException("peer host must not be blank");
    }
    if (httpPort < 0 || httpPort > 65535 || raftPort < 0 || raftPort > 65535) {
      throw new IllegalArgumentException("peer ports must be between 0 and 65535");
    }
  }

  /** A peer whose Raft transport is on the same host as its API. */
  public PeerAddress(String host, int httpPort, int raftPort) {
    this(host, httpPort, raftPort, host);
  }

  /** This peer with its Raft transport dialled at {@code host:port} instead. */
  public PeerAddress withRaft(String host, int port) {
    return new PeerAddress(this.host, httpPort, port, host);
  }

  /** Parses {@code host:http[:raft]}; the message names the bad part. */
  public static PeerAddress parse(String text) {
    String[] parts = text.trim().split(":");
    if (parts.length < 2 || parts.length > 3) {
      throw new IllegalArgumentException(
          "peer '" + text + "' must be host:httpPort or host:httpPort:raftPort");
    }
    int http = port(parts[1], text);
    int raft = parts.length == 3 ? port(parts[2], text) : http + RAFT_PORT_OFFSET;
    return new PeerAddress(parts[0], http, raft);
  }

  public static List<PeerAddress> parseList(String text) {
    var peers = new ArrayList<PeerAddress>();
    for (String part : text.split(",")) {
      if (!part.isBlank()) {
        peers.add(parse(part));
      }
    }
    return peers;
  }

  private static int port(String s, String whole) {
    try {
      int p = Integer.parseInt(s);
      if (p < 1 || p > 65535) {
        throw new NumberFormatException();
      }
      return p;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "peer '" + whole + "': '" + s + "' is not a port (1-65535)");
    }
  }

  /** The Raft peer id: stable, and the same on every replica given the same address. */
  public String id() {
    return (host + "_" + httpPort).replaceAll("[^A-Za-z0-9_]", "_");
  }

  public String httpUrl() {
    return "http://" + host + ":" + httpPort;
  }

  public String raftAddress() {
    return (raftHost.contains(":") && !raftHost.startsWith("[") ? "[" + raftHost + "]" : raftHost)
        + ":"
        + raftPort;
  }
}
