export const metadata = { title: "Acme Tools" };

export default function RootLayout({ children }: { children: React.ReactNode }) {
  return (
    <html lang="en">
      <body>
        <header data-testid="site-header">
          <a href="/">Acme Tools</a>
          <nav>
            <a href="/products">Products</a>
            <a href="/pricing">Pricing</a>
            <a href="/blog">Blog</a>
            <a href="/about">About</a>
            <a href="/contact">Contact</a>
          </nav>
        </header>
        {children}
        <footer>Acme Tools, 1 Anvil Road</footer>
      </body>
    </html>
  );
}
