package io.kairos.sim.report;

import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

/** Parses SVG text as XML (which also proves it well-formed) and finds elements in it. */
final class Xml {
  private Xml() {}

  static Document parse(String xml) {
    try {
      var factory = DocumentBuilderFactory.newInstance();
      factory.setNamespaceAware(true);
      factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
      return factory.newDocumentBuilder().parse(new InputSource(new StringReader(xml)));
    } catch (Exception e) {
      throw new AssertionError("not well-formed XML: " + e.getMessage() + "\n" + xml, e);
    }
  }

  /**
   * Elements named {@code tag} whose class attribute contains {@code cls} (any class when null).
   */
  static List<Element> find(Document doc, String tag, String cls) {
    NodeList nodes = doc.getElementsByTagNameNS("*", tag);
    var out = new ArrayList<Element>();
    for (int i = 0; i < nodes.getLength(); i++) {
      var e = (Element) nodes.item(i);
      if (cls == null || List.of(e.getAttribute("class").split(" ")).contains(cls)) {
        out.add(e);
      }
    }
    return out;
  }
}
