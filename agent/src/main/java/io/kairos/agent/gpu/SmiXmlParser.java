package io.kairos.agent.gpu;

import java.io.IOException;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.xml.sax.InputSource;
import org.xml.sax.SAXException;

/**
 * Parses {@code nvidia-smi -q -x}: a {@code <nvidia_smi_log>} with one {@code <gpu>} element per
 * device.
 *
 * <p>Design: the JDK's DOM parser with external entities and external DTD loading turned off. Real
 * output starts with {@code <!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">}, so a DOCTYPE
 * must be accepted, but the DTD is never fetched and no entity is resolved outside the document.
 * The schema has changed across drivers; each reading tries the spellings we know:
 *
 * <ul>
 *   <li>index: the position of the {@code <gpu>} element, which is nvidia-smi's index (PCI bus
 *       order) and the {@code GPUn} of {@code topo -m}. {@code minor_number} is the {@code
 *       /dev/nvidiaN} number and may differ, so it is not used as the index.
 *   <li>memory: {@code fb_memory_usage/total}, or {@code memory_usage/total} before driver 319.
 *   <li>uncorrectable ECC: {@code double_bit/total} (to driver ~470, Volta and older) or the sum of
 *       {@code dram_uncorrectable}, {@code sram_uncorrectable} and its {@code _parity}/{@code
 *       _secded} split (newer drivers), under {@code volatile} and {@code aggregate}.
 *   <li>pending repairs: {@code retired_pages/pending_retirement} or the older {@code
 *       pending_blacklist}; {@code remapped_rows/remapped_row_pending} and {@code
 *       remapped_row_failure} (or {@code pending}/{@code failure}).
 *   <li>temperature: {@code gpu_temp}, {@code gpu_temp_slow_threshold}, {@code
 *       gpu_temp_max_threshold}.
 * </ul>
 *
 * Pure and thread-safe.
 */
public final class SmiXmlParser {
  private SmiXmlParser() {}

  /**
   * The parsed report.
   *
   * @param driverVersion e.g. {@code 535.129.03}, "" when absent
   * @param gpus in index order
   */
  public record Report(String driverVersion, List<GpuDetails> gpus) {
    public Report {
      gpus = List.copyOf(gpus);
    }
  }

  /**
   * @throws IllegalArgumentException when the text is not an nvidia-smi XML report
   */
  public static Report parse(String xml) {
    Element root = parseDocument(xml);
    if (!root.getTagName().equals("nvidia_smi_log")) {
      throw new IllegalArgumentException(
          "-q -x: root element is <" + root.getTagName() + ">, expected <nvidia_smi_log>");
    }
    String driver = text(root, "driver_version").orElse("");
    List<GpuDetails> gpus = new ArrayList<>();
    for (Element gpu : children(root, "gpu")) {
      gpus.add(gpu(gpus.size(), gpu));
    }
    return new Report(driver, gpus);
  }

  private static GpuDetails gpu(int index, Element gpu) {
    String where = "-q -x gpu " + index;
    String uuid =
        text(gpu, "uuid")
            .filter(u -> !SmiValues.isMissing(u))
            .orElseThrow(() -> new IllegalArgumentException(where + ": no <uuid>"));
    String busId = text(gpu, "pci", "pci_bus_id").orElseGet(() -> gpu.getAttribute("id"));
    long memoryBytes =
        SmiValues.mibToBytes(
            text(gpu, "fb_memory_usage", "total")
                .or(() -> text(gpu, "memory_usage", "total"))
                .orElse("N/A"),
            where + " memory total");
    return new GpuDetails(
        index,
        uuid,
        text(gpu, "product_name").orElse("unknown"),
        memoryBytes,
        busId,
        SmiValues.celsius(text(gpu, "temperature", "gpu_temp").orElse("N/A"), where + " gpu_temp"),
        SmiValues.celsius(
            text(gpu, "temperature", "gpu_temp_slow_threshold").orElse("N/A"),
            where + " gpu_temp_slow_threshold"),
        SmiValues.celsius(
            text(gpu, "temperature", "gpu_temp_max_threshold").orElse("N/A"),
            where + " gpu_temp_max_threshold"),
        uncorrectable(gpu, "volatile", where),
        uncorrectable(gpu, "aggregate", where),
        yesAt(gpu, "retired_pages", "pending_retirement")
            || yesAt(gpu, "retired_pages", "pending_blacklist"),
        yesAt(gpu, "remapped_rows", "remapped_row_pending")
            || yesAt(gpu, "remapped_rows", "pending"),
        yesAt(gpu, "remapped_rows", "remapped_row_failure")
            || yesAt(gpu, "remapped_rows", "failure"));
  }

  // Sums every uncorrectable counter the driver reports under ecc_errors/<counter>; UNKNOWN when
  // none is a number (ECC disabled or unsupported).
  private static long uncorrectable(Element gpu, String counter, String where) {
    Optional<Element> section = element(gpu, "ecc_errors", counter);
    if (section.isEmpty()) {
      return GpuDetails.UNKNOWN;
    }
    long total = 0;
    boolean any = false;
    // sram_uncorrectable (driver 5xx) was later split into _parity and _secded; count either the
    // whole or its parts, never both.
    Optional<String> sram = text(section.get(), "sram_uncorrectable");
    List<Optional<String>> readings =
        sram.isPresent()
            ? List.of(
                text(section.get(), "double_bit", "total"),
                text(section.get(), "dram_uncorrectable"),
                sram)
            : List.of(
                text(section.get(), "double_bit", "total"),
                text(section.get(), "dram_uncorrectable"),
                text(section.get(), "sram_uncorrectable_parity"),
                text(section.get(), "sram_uncorrectable_secded"));
    for (Optional<String> reading : readings) {
      if (reading.isPresent()) {
        long value = SmiValues.number(reading.get(), where + " ecc " + counter);
        if (value >= 0) {
          total += value;
          any = true;
        }
      }
    }
    return any ? total : GpuDetails.UNKNOWN;
  }

  private static boolean yesAt(Element gpu, String... path) {
    return text(gpu, path).map(SmiValues::yes).orElse(false);
  }

  private static Element parseDocument(String xml) {
    try {
      DocumentBuilder builder = factory().newDocumentBuilder();
      builder.setEntityResolver(
          (publicId, systemId) -> new InputSource(new StringReader(""))); // never fetch a DTD
      builder.setErrorHandler(null);
      return builder.parse(new InputSource(new StringReader(xml))).getDocumentElement();
    } catch (SAXException | IOException e) {
      throw new IllegalArgumentException("-q -x: not well-formed XML: " + e.getMessage(), e);
    } catch (ParserConfigurationException e) {
      throw new IllegalStateException("the JDK XML parser refused a standard feature", e);
    }
  }

  private static DocumentBuilderFactory factory() throws ParserConfigurationException {
    var f = DocumentBuilderFactory.newInstance();
    f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
    f.setFeature("http://xml.org/sax/features/external-general-entities", false);
    f.setFeature("http://xml.org/sax/features/external-parameter-entities", false);
    f.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
    f.setAttribute(XMLConstants.ACCESS_EXTERNAL_DTD, "");
    f.setAttribute(XMLConstants.ACCESS_EXTERNAL_SCHEMA, "");
    f.setXIncludeAware(false);
    f.setExpandEntityReferences(false);
    f.setNamespaceAware(false);
    f.setValidating(false);
    return f;
  }

  private static List<Element> children(Element parent, String tag) {
    List<Element> found = new ArrayList<>();
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element e && e.getTagName().equals(tag)) {
        found.add(e);
      }
    }
    return found;
  }

  private static Optional<Element> element(Element from, String... path) {
    Element at = from;
    for (String tag : path) {
      List<Element> next = children(at, tag);
      if (next.isEmpty()) {
        return Optional.empty();
      }
      at = next.getFirst();
    }
    return Optional.of(at);
  }

  private static Optional<String> text(Element from, String... path) {
    return element(from, path).map(e -> e.getTextContent().strip());
  }
}
