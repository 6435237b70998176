package io.kairos.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class EventQueueTest {
  /** An event as the reference queue holds it. */
  private record Event(long time, int kind, long seq, int payload) {}

  private static final Comparator<Event> ORDER =
      Comparator.comparingLong(Event::time)
          .thenComparingInt(Event::kind)
          .thenComparingLong(Event::seq);

  private static Event pollEvent(EventQueue q) {
    var e = new Event(q.peekTime(), q.peekKind(), -1, q.peekPayload());
    q.poll();
    return e;
  }

  private static List<Event> drain(EventQueue q) {
    var out = new ArrayList<Event>();
    while (!q.isEmpty()) {
      out.add(pollEvent(q));
    }
    return out;
  }

  @Test
  void emptyQueue() {
    var q = new EventQueue();
    assertThat(q.isEmpty()).isTrue();
    assertThat(q.size()).isZero();
    q.add(5, EventQueue.FINISH, 1);
    assertThat(q.isEmpty()).isFalse();
    assertThat(q.size()).isEqualTo(1);
    q.poll();
    assertThat(q.isEmpty()).isTrue();
  }

  @Test
  void ordersByTime() {
    var q = new EventQueue();
    long[] times = {50, 10, 40, 0, 30, 20, 1L << 40, 7};
    for (int i = 0; i < times.length; i++) {
      q.add(times[i], EventQueue.FINISH, i);
    }
    assertThat(drain(q).stream().map(Event::time).toList())
        .containsExactly(0L, 7L, 10L, 20L, 30L, 40L, 50L, 1L << 40);
  }

  @Test
  void finishBeforeArrivalAtTheSameTime() {
    var q = new EventQueue();
    q.add(100, EventQueue.ARRIVAL, 1);
    q.add(100, EventQueue.ARRIVAL, 2);
    q.add(100, EventQueue.FINISH, 3);
    q.add(99, EventQueue.ARRIVAL, 4);
    q.add(100, EventQueue.FINISH, 5);
    var events = drain(q);
    assertThat(events.stream().map(Event::payload).toList()).containsExactly(4, 3, 5, 1, 2);
    assertThat(events.stream().map(Event::kind).toList())
        .containsExactly(
            EventQueue.ARRIVAL,
            EventQueue.FINISH,
            EventQueue.FINISH,
            EventQueue.ARRIVAL,
            EventQueue.ARRIVAL);
  }

  @Test
  void fifoAmongEqualTimeAndKind() {
    var q = new EventQueue();
    // Enough to grow the arrays (initial capacity 64) several times.
    for (int i = 0; i < 1000; i++) {
      q.add(42, EventQueue.FINISH, i);
    }
    var payloads = drain(q).stream().map(Event::payload).toList();
    for (int i = 0; i < 1000; i++) {
      assertThat(payloads.get(i)).isEqualTo(i);
    }
  }

  @Test
  void fifoSurvivesInterleavedPolls() {
    var q = new EventQueue();
    for (int i = 0; i < 10; i++) {
      q.add(7, EventQueue.FINISH, i);
    }
    q.poll(); // 0
    q.poll(); // 1
    for (int i = 10; i < 20; i++) {
      q.add(7, EventQueue.FINISH, i);
    }
    var payloads = drain(q).stream().map(Event::payload).toList();
    assertThat(payloads)
        .containsExactly(2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19);
  }

  /**
   * 1000 random adds and polls against {@link PriorityQueue} with the same (time, kind, seq) order;
   * seeds 0..99. Times are drawn from a small range so that ties are common.
   */
  static LongStream seeds() {
    return LongStream.range(0, 100);
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void matchesPriorityQueue(long seed) {
    {
      var random = new SplittableRandom(seed);
      var q = new EventQueue();
      var reference = new PriorityQueue<>(ORDER);
      long seq = 0;
      long maxTime =
          switch ((int) (seed % 3)) {
            case 0 -> 10;
            case 1 -> 1000;
            default -> 1L << 50;
          };
      for (int op = 0; op < 1000; op++) {
        if (reference.isEmpty() || random.nextInt(100) < 60) {
          long time = random.nextLong(maxTime);
          int kind = random.nextInt(4);
          int payload = random.nextInt();
          q.add(time, kind, payload);
          reference.add(new Event(time, kind, seq++, payload));
        } else {
          var expected = reference.poll();
          assertThat(q.peekTime()).as("seed %d op %d", seed, op).isEqualTo(expected.time());
          assertThat(q.peekKind()).as("seed %d op %d", seed, op).isEqualTo(expected.kind());
          assertThat(q.peekPayload()).as("seed %d op %d", seed, op).isEqualTo(expected.payload());
          q.poll();
        }
        assertThat(q.size()).as("seed %d op %d", seed, op).isEqualTo(reference.size());
      }
      while (!reference.isEmpty()) {
        var expected = reference.poll();
        assertThat(q.peekTime()).as("seed %d drain", seed).isEqualTo(expected.time());
        assertThat(q.peekKind()).as("seed %d drain", seed).isEqualTo(expected.kind());
        assertThat(q.peekPayload()).as("seed %d drain", seed).isEqualTo(expected.payload());
        q.poll();
      }
      assertThat(q.isEmpty()).isTrue();
    }
  }

  /**
   * The key is {@code time << 2 | kind}: times of 2^61 or more would overflow it, so the queue
   * refuses them (the simulator keeps times below 2^40 s and rejects traces that exceed that).
   */
  @Test
  void refusesTimesThatWouldOverflowTheKey() {
    var q = new EventQueue();
    assertThatThrownBy(() -> q.add(1L << 61, EventQueue.FINISH, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("2^61");
    q.add((1L << 61) - 1, EventQueue.TICK, 1);
    q.add(5, EventQueue.FINISH, 2);
    assertThat(q.peekTime()).isEqualTo(5);
  }
}
